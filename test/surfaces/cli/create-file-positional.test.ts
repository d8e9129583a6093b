/**
 * `zot create FILE|-` (issue 16, point 10): the items file is the command's positional, so
 * `--json` is the global output flag on this command as on every other one. The CLI runs in
 * process against the Zotero test server, with stdout a TTY or a pipe as the test says.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { groups, tools } from '../../../src/tools/index.js';
import { LIB, startItemsWorld, type ItemsWorld } from '../../tools/items/setup.js';

let w: ItemsWorld;
beforeEach(async () => {
  w = await startItemsWorld();
});
afterEach(async () => {
  await w.close();
});

async function zot(
  argv: string[],
  options: { tty?: boolean; stdin?: string; env?: Record<string, string | undefined> } = {},
) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void, isTTY: boolean) =>
    Object.assign(
      new Writable({
        write(chunk, _encoding, done) {
          append(String(chunk));
          done();
        },
      }),
      { isTTY, columns: 100 },
    );
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  stdin.end(options.stdin ?? '');
  const code = await runCli({
    argv,
    env: w.env(options.env),
    io: {
      stdout: sink((s) => (stdout += s), options.tty ?? false),
      stderr: sink((s) => (stderr += s), options.tty ?? false),
      stdin,
    },
    tools,
    groups,
  });
  return { code, stdout, stderr };
}

const article = (i: number) => ({ itemType: 'journalArticle', title: `Paper ${i}`, date: '2020' });

describe('zot create FILE|-', () => {
  it('help shows ITEMS as the argument and no --json option of its own', async () => {
    const help = await zot(['create', '--help'], { tty: true });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: zot create ITEMS [options]');
    expect(help.stdout).toMatch(/^ {2}ITEMS +Path to a JSON file, or - for stdin\./m);
    expect(help.stdout).not.toMatch(/^ +--json\b/m);
    const schema = await zot(['schema', 'create']);
    const params = (JSON.parse(schema.stdout) as { data: { params: Array<Record<string, unknown>> } }).data
      .params;
    expect(params[0]).toMatchObject({ name: 'items', kind: 'argument', type: 'string', required: true });
    expect(params.some((p) => (p.flags as string[] | undefined)?.includes('--json'))).toBe(false);
  });

  it('a file and stdin create the items; the envelope is the same either way', async () => {
    const file = join(w.world.box.dir, 'items.json');
    writeFileSync(file, JSON.stringify([article(1), article(2)]));
    const fromFile = await zot(['create', file]);
    expect(fromFile.code).toBe(0);
    const env = JSON.parse(fromFile.stdout) as { ok: boolean; data: { created: unknown[] } };
    expect(env.ok).toBe(true);
    expect(env.data.created).toHaveLength(2);
    const fromStdin = await zot(['create', '-'], { stdin: JSON.stringify([article(3)]) });
    expect(fromStdin.code).toBe(0);
    expect((JSON.parse(fromStdin.stdout) as { data: { created: unknown[] } }).data.created).toHaveLength(1);
    expect(w.world.server.library(LIB).items.size).toBe(3);
  });

  it('on a TTY the output is a table unless --json is given; `create --json FILE` is that flag and the file', async () => {
    const file = join(w.world.box.dir, 'items.json');
    writeFileSync(file, JSON.stringify([article(1)]));
    const table = await zot(['create', file, '--dry-run'], { tty: true });
    expect(table.code).toBe(0);
    expect(() => JSON.parse(table.stdout) as unknown).toThrow();
    expect(table.stdout).toContain('journalArticle');
    // The spelling of 0.2.0 still works and means what --json means everywhere: JSON output.
    const json = await zot(['create', '--json', file, '--dry-run'], { tty: true });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      dry_run: true,
      data: { would: { command: 'create', items: 1, itemTypes: { journalArticle: 1 } } },
    });
    expect(json.stderr).toBe('');
    expect(w.world.server.log).toHaveLength(0);
  });

  it('without ITEMS, or with a file that is not there: validation_error naming ITEMS, nothing sent', async () => {
    const none = await zot(['create']);
    expect(none.code).toBe(3);
    expect(JSON.parse(none.stdout)).toMatchObject({
      ok: false,
      error: {
        code: 'validation_error',
        field: 'items',
        message:
          'ITEMS is required: the path of a JSON file, or - to read it from stdin, e.g. `zot create items.json`.',
      },
    });
    const missing = join(w.world.box.dir, 'nope.json');
    const gone = await zot(['create', missing]);
    expect(gone.code).toBe(3);
    expect(JSON.parse(gone.stdout)).toMatchObject({
      error: {
        code: 'validation_error',
        field: 'items',
        message: `ITEMS: file not found: ${missing}.`,
        hint: 'Give ITEMS as the path of a JSON file you can read, or as - to read it from stdin (`- < FILE`).',
      },
    });
    expect(w.world.server.log).toHaveLength(0);
  });
});
