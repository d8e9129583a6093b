/**
 * `zotero_attachment_audit` on a zotero.sqlite of 10,000 attachments (5,000 items, each a PDF
 * and a snapshot): every second item's PDF in storage/ with Zotero's mtime (not hashed), a
 * tenth of those edited (hashed, MD5 differs), the other files only in the cloud. Through the tool's `run`
 * with one `deps` (a new one for the cold row). Target: under 2 s.
 *
 *   node bench/run.mjs bench/attachment-audit.bench-run.ts
 *
 * Knob: BENCH_AUDIT_ITEMS (5000; two attachments each).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { createDeps } from '../src/core/deps.js';
import { CLI_VERSION } from '../src/core/version.js';
import tool from '../src/tools/attachments/audit.js';
import { buildZoteroDb, type BuildSpec } from '../test/support/zotero-sqlite/index.js';
import { printTimingRows, timers, type TimingRow } from './support.js';

const ITEMS = Number(process.env.BENCH_AUDIT_ITEMS ?? 5_000);
const MTIME = 1_700_000_000_000;
const rows: TimingRow[] = [];
const { once, warm } = timers(rows, 5);
let dir: string;
let dataDir: string;

const keyOf = (prefix: string, i: number): string => {
  const alphabet = '23456789ABCDEFGHIJKLMNPQRSTUVWXYZ';
  let n = i;
  let out = '';
  for (let d = 0; d < 5; d++) {
    out = alphabet[n % alphabet.length] + out;
    n = Math.floor(n / alphabet.length);
  }
  return `${prefix}${out}`;
};
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-audit-'));
  dataDir = join(dir, 'Zotero');
  const items: NonNullable<BuildSpec['libraries'][number]['items']> = [];
  for (let i = 0; i < ITEMS; i++) {
    const body = `%PDF-1.4 paper ${i}`;
    items.push({
      key: keyOf('IT', i),
      itemType: 'journalArticle',
      fields: { title: `Paper ${i}` },
      attachments: [
        {
          key: keyOf('PD', i),
          title: 'Full Text PDF',
          contentType: 'application/pdf',
          filename: 'paper.pdf',
          linkMode: 'imported_file',
          md5: md5(body),
          mtime: MTIME,
        },
        {
          key: keyOf('SN', i),
          title: 'Snapshot',
          contentType: 'text/html',
          filename: 'snap.html',
          linkMode: 'imported_url',
          md5: md5(`<html>${i}</html>`),
          mtime: MTIME,
        },
      ],
    });
  }
  await once('build zotero.sqlite', () =>
    buildZoteroDb(join(dataDir, 'zotero.sqlite'), {
      user: { userID: 1, username: 'bench' },
      libraries: [{ type: 'user', items }],
    }),
  );
  await once('write storage files', async () => {
    for (let i = 0; i < ITEMS; i += 2) {
      const folder = join(dataDir, 'storage', keyOf('PD', i));
      mkdirSync(folder, { recursive: true });
      const path = join(folder, 'paper.pdf');
      const edited = i % 20 === 0;
      writeFileSync(path, edited ? `edited ${i}` : `%PDF-1.4 paper ${i}`);
      if (!edited) utimesSync(path, MTIME / 1000, MTIME / 1000);
    }
  });
}, 600_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  printTimingRows(`zotero_attachment_audit, ${ITEMS * 2} attachments in zotero.sqlite`, rows);
});

it('audits 10,000 attachments under 2 s', async () => {
  const env = {
    HOME: dir,
    ZOT_CONFIG_DIR: join(dir, 'config'),
    ZOT_CACHE_DIR: join(dir, 'cache'),
    ZOTEUS_DATA_DIR: join(dir, 'data'),
    ZOTERO_DATA_DIR: dataDir,
    ZOTERO_API_URL: 'http://127.0.0.1:9',
    ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api',
  };
  const newDeps = () => createDeps({ config: loadConfig(env), env, version: CLI_VERSION, surface: 'mcp' });
  const note = (o: Awaited<ReturnType<typeof tool.run>>) =>
    `${o.attachments} attachments, ${o.counts.missingLocally} missing here, ${o.counts.md5Differs} MD5 differs, ${o.hashed} hashed`;
  const cold = newDeps();
  const first = await once('audit, cold (opens zotero.sqlite)', () => tool.run({}, cold), note);
  expect(first.attachments).toBe(ITEMS * 2);
  expect(rows.at(-1)!.ms).toBeLessThan(2_000);
  await warm('audit, warm (same deps)', () => tool.run({}, cold), note);
  await cold.services.close();
});
