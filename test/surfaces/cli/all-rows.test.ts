/**
 * `--all` (issue 16, point 15): every row the command would page through in one answer when it
 * fits the size bound, refused (pointing to `--stream`) when it does not; and the progress of a
 * multi-page stream is one count over the whole listing, not each page's own events.
 */
import { describe, expect, it } from 'vitest';
import { zotAt } from './terminal-harness.js';
import { sandbox } from '../../support/cli.js';

const env = () => ({ ...sandbox().env });

describe('--all', () => {
  it('reads every page into one answer, in order, with the total', async () => {
    const r = await zotAt(['fixture', 'list', '--count', '450', '--limit', '100', '--all'], { env: env() });
    // An explicit --limit caps --all as it caps --stream.
    expect(r.code).toBe(0);
    const data = r.json().data as { rows: Array<{ key: string }>; totalResults: number; nextStart?: number };
    expect(data.rows).toHaveLength(100);
    expect(data.nextStart).toBe(100);
    const all = await zotAt(['fixture', 'list', '--count', '450', '--all'], { env: env() });
    const whole = all.json().data as {
      rows: Array<{ name: string }>;
      totalResults: number;
      nextStart?: number;
    };
    expect(whole.rows.map((row) => row.name)).toEqual(Array.from({ length: 450 }, (_, i) => `Row ${i}`));
    expect(whole.totalResults).toBe(450);
    expect(whole.nextStart).toBeUndefined();
  });

  it('a listing over the size bound is refused with the way to get it all, and nothing else is printed', async () => {
    const r = await zotAt(['fixture', 'list', '--count', '5000', '--mode', 'wide', '--all'], { env: env() });
    expect(r.code).toBe(3);
    const error = r.json().error as { code: string; message: string; hint: string };
    expect(error.code).toBe('validation_error');
    expect(error.message).toMatch(
      /^--all: the \d+ of 5000 rows read so far are more than one answer holds \(about 100 KB\)\.$/,
    );
    expect(error.hint).toBe(
      'Use `zot fixture list --stream` for every row (one JSON line each), or page with --start and --limit.',
    );
  });

  it('is refused beside --stream', async () => {
    const r = await zotAt(['fixture', 'list', '--all', '--stream'], { env: env() });
    expect(r.code).toBe(3);
    expect((r.json().error as { message: string }).message).toMatch(
      /^--all and --stream both read every row/,
    );
  });

  it('is offered where a command pages, and not beside an input named all', async () => {
    const help = await zotAt(['search', '--help'], { env: env(), stdoutTTY: true });
    expect(help.stdout).toContain('--all ');
    const exp = await zotAt(['schema', 'export'], { env: env() });
    const flags = (
      (exp.json().data as { params: Array<{ flags?: string[]; name: string }> }).params ?? []
    ).filter((p) => p.flags?.includes('--all'));
    expect(flags.map((p) => p.name)).toEqual(['all']);
  });
});

describe('the progress of a stream', () => {
  it('is one count over the listing: start, progress per page, complete', async () => {
    // A first page of 200 rows (the tool's default), then pages of 100.
    const r = await zotAt(['fixture', 'list', '--count', '450', '--stream'], { env: env() });
    expect(r.code).toBe(0);
    const events = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { event: string; phase: string; done: number; total?: number });
    // Progress lines between them are throttled (at most one per 250 ms): start and complete always show.
    const own = events.filter((e) => e.phase === 'fixture_list_pages' && e.event !== 'progress');
    expect(own.map((e) => [e.event, e.done, e.total])).toEqual([
      ['start', 200, 450],
      ['complete', 450, 450],
    ]);
    // The tool's own per-page events come from the first page only.
    expect(events.filter((e) => e.phase === 'list')).toHaveLength(2);
  });
});

describe('a partial answer at a terminal', () => {
  it('lists what failed on stderr beside what landed', async () => {
    const box = sandbox();
    const r = await zotAt(['fixture', 'batch', 'ok', 'bad1', 'ok2'], {
      env: { ...box.env, ZOTERO_API_KEY: 'AbCdEfGhIjKlMnOpQrStUvWx', FIXTURE_DIR: box.dir },
      stdoutTTY: true,
    });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('1 failed:\n  bad1: Could not reach the resolver for bad1.\n');
  });
});
