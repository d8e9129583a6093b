/** The declaration itself: its tier, its input schema's edges, `plan` (what --dry-run prints) and `run`. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { createDeps } from '../../../src/core/deps.js';
import type { Deps } from '../../../src/core/tool.js';
import evidenceTable from '../../../src/tools/evidence/evidence-table.js';
import { tools } from '../../../src/tools/index.js';
import { isolatedEnv } from '../../surfaces/mcp/harness.js';

const ROW = {
  item_key: 'ABCD2345',
  study: 'Smith 2020',
  finding: 'It helps.',
  coverage: 'abstract-only',
  support: 'unverified',
} as const;

function deps(extra: Partial<Deps> = {}): Deps {
  const env = isolatedEnv();
  return { ...createDeps({ config: loadConfig(env), env, version: '0', surface: 'mcp' }), ...extra };
}

describe('the declaration', () => {
  it('is registered once, as a write that only touches files, needing no key', () => {
    expect(tools.filter((t) => t.name === 'zotero_evidence_table')).toHaveLength(1);
    expect(evidenceTable).toMatchObject({
      tier: 'write',
      openWorld: false,
      writesFilesOnly: true,
      idempotent: true,
      needsKey: false,
    });
    expect(evidenceTable.cli).toEqual([
      { path: ['evidence-table'], files: { rows: 'json' }, flags: { save_path: 'save' } },
    ]);
  });

  it('accepts null for the optional row fields, numbers or strings as pages, and keeps row order', () => {
    const rows = [
      { ...ROW, quotation: null, page: null, page_exact: null, note: null },
      { ...ROW, item_key: 'BCDE3456', page: 'xii' },
      { ...ROW, item_key: 'CDEF4567', page: 12.5 },
    ];
    const parsed = evidenceTable.input.parse({ question: 'Q', rows });
    expect(parsed.rows.map((r) => r.item_key)).toEqual(['ABCD2345', 'BCDE3456', 'CDEF4567']);
    expect(parsed.format).toBe('markdown');
    expect(parsed.overwrite).toBe(false);
    expect(evidenceTable.input.safeParse({ question: 'Q', rows: [{ ...ROW, page: true }] }).success).toBe(
      false,
    );
    expect(evidenceTable.input.safeParse({ question: 'Q', rows: [{ ...ROW, study: 3 }] }).success).toBe(
      false,
    );
  });

  it('plan: what --dry-run prints, computed without writing', () => {
    const input = evidenceTable.input.parse({ question: 'Q', rows: [ROW], format: 'csv' });
    const d = deps();
    expect(evidenceTable.plan!(input, d)).toMatchObject({ savePath: null, format: 'csv', rowCount: 1 });
    const dir = mkdtempSync(join(tmpdir(), 'zoteus-plan-'));
    const withPath = evidenceTable.input.parse({
      question: 'Q',
      rows: [ROW],
      save_path: join(dir, 'a', 't.md'),
    });
    expect(evidenceTable.plan!(withPath, d)).toMatchObject({
      savePath: join(dir, 'a', 't.md'),
      savePathExists: false,
      format: 'markdown',
    });
    // On a shared deployment the plan applies the same confinement.
    const confined = { ...d, fileRoot: join(dir, 'callers', 'x') } as Deps;
    expect(
      evidenceTable.plan!(
        evidenceTable.input.parse({ question: 'Q', rows: [ROW], save_path: 'a.md' }),
        confined,
      ),
    ).toMatchObject({ savePath: join(dir, 'callers', 'x', 'a.md') });
    expect(() =>
      evidenceTable.plan!(
        evidenceTable.input.parse({ question: 'Q', rows: [ROW], save_path: '../a.md' }),
        confined,
      ),
    ).toThrow(/may not contain "\.\."/);
  });

  it('run: formats only, saves inside fileRoot when one is set', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zoteus-run-'));
    const d = deps({ fileRoot: join(dir, 'callers', 's1') });
    const out = await evidenceTable.run(
      evidenceTable.input.parse({ question: 'Q', rows: [ROW], save_path: 'x/t.md' }),
      d,
    );
    expect(out.savedTo).toBe(join(dir, 'callers', 's1', 'x', 't.md'));
    expect(readFileSync(out.savedTo!, 'utf8')).toBe(out.table);
    expect(evidenceTable.output.safeParse(out).success).toBe(true);
    expect(evidenceTable.summarize!(out, evidenceTable.input.parse({ question: 'Q', rows: [ROW] }))).toBe(
      `Evidence table (markdown, 1 row). Coverage: 0 of 1 row rests on a retrieved passage, 1 on the abstract only, 0 on no retrieved text. 0 rows contradict their own evidence; 0 warnings. Saved to ${out.savedTo}.`,
    );
  });
});
