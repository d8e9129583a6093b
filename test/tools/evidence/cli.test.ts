/** `zot evidence-table` as an agent runs it: the built CLI as a subprocess (run `npm run build` first). */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { needsFormulaGuard } from '../../../src/render/evidence/index.js';
import { runZot, sandbox } from '../../support/cli.js';
import { HOSTILE_QUESTION, HOSTILE_ROWS } from '../../render/fixtures.js';

let box: ReturnType<typeof sandbox>;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());

const ROWS = [
  {
    item_key: 'ABCD2345',
    study: 'Smith 2020',
    finding: '=HYPERLINK("http://evil")',
    quotation: 'It helped, "a lot".',
    page: -5,
    page_exact: true,
    coverage: 'passage',
    support: 'supported',
  },
];

const zot = (args: string[], stdin?: string, env: Record<string, string> = {}) =>
  runZot(['evidence-table', ...args], {
    env: { ...box.env, ...env },
    ...(stdin !== undefined ? { stdin } : {}),
  });

const golden = (name: string) => readFileSync(join(import.meta.dirname, '../../render/golden', name), 'utf8');

describe('zot evidence-table', () => {
  it('reads rows from stdin and prints the tool output as `data` (CSV)', async () => {
    const r = await zot(['--question', 'Q', '--rows', '-', '--format', 'csv'], JSON.stringify(ROWS));
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env.ok).toBe(true);
    const data = env.data as Record<string, unknown>;
    expect(data).not.toHaveProperty('sync_required');
    expect(r.stderr).not.toContain('SYNC_REMINDER');
    expect(data).toMatchObject({ format: 'csv', question: 'Q', rowCount: 1 });
    const records = parse(data.table as string, { record_delimiter: '\r\n' }) as string[][];
    expect(records[1]).toEqual([
      'ABCD2345',
      'Smith 2020',
      `'=HYPERLINK("http://evil")`,
      'It helped, "a lot".',
      '-5',
      'exact',
      'passage',
      'supported',
      '',
    ]);
    expect(data.warnings).toEqual([
      expect.stringMatching(/^Row 1 \(ABCD2345\): the Finding cell begins with "="/),
    ]);
  });

  it('in table mode prints the rendered table itself, byte for byte', async () => {
    const file = join(box.dir, 'rows.json');
    writeFileSync(file, JSON.stringify(HOSTILE_ROWS));
    const r = await zot(['--question', HOSTILE_QUESTION, '--rows', file, '--format', 'csv'], undefined, {
      ZOT_FORMAT: 'table',
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(golden('evidence-hostile.csv'));
  });

  it('renders hostile rows from a file exactly as the golden files, in both formats', async () => {
    const file = join(box.dir, 'rows.json');
    writeFileSync(file, JSON.stringify(HOSTILE_ROWS));
    const md = await zot(['--question', HOSTILE_QUESTION, '--rows', file]);
    expect(md.code).toBe(0);
    expect((md.json().data as { table: string }).table).toBe(golden('evidence-hostile.md'));
    const csv = await zot(['--question', HOSTILE_QUESTION, '--rows', file, '--format', 'csv']);
    const table = (csv.json().data as { table: string }).table;
    expect(table).toBe(golden('evidence-hostile.csv'));
    const records = parse(table, { record_delimiter: '\r\n' }) as string[][];
    HOSTILE_ROWS.forEach((row, i) => {
      const cell = records[i + 1]![3]!;
      const given = row.quotation ?? '';
      expect(needsFormulaGuard(given) ? cell.slice(1) : cell).toBe(given);
    });
  });

  it('--save writes the same bytes as `table`; refuses to overwrite without --overwrite', async () => {
    const path = join(box.dir, 'out', 'table.csv');
    const first = await zot(
      ['--question', 'Q', '--rows', '-', '--format', 'csv', '--save', path],
      JSON.stringify(ROWS),
    );
    expect(first.code).toBe(0);
    const data = first.json().data as { table: string; savedTo: string };
    expect(data.savedTo).toBe(path);
    expect(readFileSync(path, 'utf8')).toBe(data.table);

    const again = await zot(['--question', 'Other', '--rows', '-', '--save', path], JSON.stringify(ROWS));
    expect(again.code).toBe(6);
    const error = again.json().error as Record<string, unknown>;
    expect(error).toMatchObject({ code: 'conflict', field: 'save_path' });
    expect(error.hint).toContain('--overwrite');
    expect(readFileSync(path, 'utf8')).toBe(data.table);

    const forced = await zot(
      ['--question', 'Other', '--rows', '-', '--save', path, '--overwrite'],
      JSON.stringify(ROWS),
    );
    expect(forced.code).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe((forced.json().data as { table: string }).table);
  });

  it('expands ~ in --save (the local case)', async () => {
    const r = await zot(['--question', 'Q', '--rows', '-', '--save', '~/tables/t.md'], JSON.stringify(ROWS));
    expect(r.code).toBe(0);
    expect((r.json().data as { savedTo: string }).savedTo).toBe(join(box.dir, 'tables', 't.md'));
  });

  it('--dry-run validates and prints what would be written, writing nothing', async () => {
    const path = join(box.dir, 'dry.md');
    const r = await zot(
      ['--question', 'Q', '--rows', '-', '--save', path, '--dry-run'],
      JSON.stringify(ROWS),
    );
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env).toMatchObject({
      ok: true,
      dry_run: true,
      data: {
        would: {
          command: 'evidence-table',
          savePath: path,
          format: 'markdown',
          rowCount: 1,
          savePathExists: false,
        },
      },
    });
    expect((env.data as { would: { table: string } }).would.table).toMatch(/^Table: Q\n/);
    expect(existsSync(path)).toBe(false);
    const bad = await zot(
      ['--question', 'Q', '--rows', '-', '--dry-run'],
      JSON.stringify([{ ...ROWS[0], support: 'yes' }]),
    );
    expect(bad.code).toBe(3);
  });

  it('names the row and the field of a bad row; bad JSON is a validation error', async () => {
    const bad = await zot(
      ['--question', 'Q', '--rows', '-'],
      JSON.stringify([ROWS[0], { ...ROWS[0], support: 'yes' }]),
    );
    expect(bad.code).toBe(3);
    const error = bad.json().error as Record<string, unknown>;
    expect(error).toMatchObject({ code: 'validation_error', field: 'rows' });
    expect(error.message).toContain('--rows[1].support: Row 2: support must be one of');
    const unknown = await zot(['--question', 'Q', '--rows', '-'], JSON.stringify([{ ...ROWS[0], pages: 3 }]));
    expect(unknown.code).toBe(3);
    expect((unknown.json().error as { message: string }).message).toContain(
      "--rows[0]: Row 1 has unknown field 'pages'",
    );
    const notJson = await zot(['--question', 'Q', '--rows', '-'], '[{"item_key":');
    expect(notJson.code).toBe(3);
    expect(notJson.json().error).toMatchObject({ code: 'validation_error', field: 'rows' });
    const missing = await zot(['--rows', '-'], JSON.stringify(ROWS));
    expect(missing.code).toBe(3);
    expect((missing.json().error as { field: string }).field).toBe('question');
  });

  it('--help says WRITES FILES, not MUTATES LIBRARY; zot --help files it under local files', async () => {
    const help = await zot(['--help'], undefined, { ZOT_FORMAT: 'table' });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('WRITES FILES');
    expect(help.stdout).not.toContain('MUTATES LIBRARY');
    expect(help.stdout).toContain('--rows <string>');
    expect(help.stdout).toContain('--save <string>');
    expect(help.stdout).toContain('--overwrite');
    const root = await runZot(['--help'], { env: { ...box.env, ZOT_FORMAT: 'table' } });
    const section = root.stdout.slice(root.stdout.indexOf('Local files (WRITES FILES):'));
    expect(section.split('\n\n')[0]).toContain('evidence-table');
  });

  it('zot schema describes it', async () => {
    const r = await runZot(['schema', 'evidence-table'], { env: box.env });
    expect(r.code).toBe(0);
    const node = r.json().data as {
      safety_tier: string;
      mcp_tool: string;
      params: Array<Record<string, unknown>>;
    };
    expect(node.safety_tier).toBe('write');
    expect(node.mcp_tool).toBe('zotero_evidence_table');
    const byName = Object.fromEntries(node.params.map((p) => [p.name, p]));
    expect(byName.rows).toMatchObject({ flags: ['--rows'], required: true });
    expect(byName.save_path).toMatchObject({ flags: ['--save'], required: false });
    expect(byName.format).toMatchObject({ type: 'enum', choices: ['markdown', 'csv'], default: 'markdown' });
  });

  it('read-only mode keeps it (it changes nothing in the library; conventions.md, "Tiers")', async () => {
    const r = await zot(['--question', 'Q', '--rows', '-'], JSON.stringify(ROWS), {
      ZOTEUS_READ_ONLY: 'true',
    });
    expect(r.code).toBe(0);
    expect((r.json().data as { rowCount: number }).rowCount).toBe(ROWS.length);
    const dry = await zot(['--question', 'Q', '--rows', '-', '--dry-run'], JSON.stringify(ROWS), {
      ZOTEUS_READ_ONLY: 'true',
    });
    expect(dry.code).toBe(0);
  });
});
