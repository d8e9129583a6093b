/**
 * `zot pdf KEY --q WORDS` on a 400-page PDF, as whole processes (as an agent runs it): the
 * first run extracts the text with pdfjs, the second reads the disk cache of extracted text
 * (`$ZOT_CACHE_DIR/fulltext/`), and a third item answers from a complete `.zotero-ft-cache`
 * (the desktop's own index, with form feeds between pages). The PDF is made by the project's
 * PDF writer with known words on a known page; each run checks the best passage's page.
 * The library is a generated zotero.sqlite (no key, no network); no desktop app runs.
 *
 *   npm run build && node bench/run.mjs bench/fulltext.bench-run.ts
 *
 * Knobs: BENCH_FT_PAGES (400), BENCH_FT_PROCS (5 processes per row, after one unmeasured run;
 * the first-run row uses a new, empty cache directory for each process).
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { median, printTimingRows, timers, type TimingRow } from './support.js';
import { extractPdf } from '../src/core/fulltext/pdf.js';
import { buildZoteroDb } from '../src/demo/fixture/index.js';
import { makePdf } from '../test/support/documents/index.js';

const PAGES = Number(process.env.BENCH_FT_PAGES ?? 400);
const PROCS = Number(process.env.BENCH_FT_PROCS ?? 5);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ZOT = join(ROOT, 'bin', 'zot');

/** The words searched for, and the one page that holds them. */
const QUERY = 'Thwaites calving front';
const TARGET_PAGE = Math.max(1, Math.round(PAGES * 0.71));
const SENTENCE = 'The calving front of Thwaites Glacier retreated by 14 kilometres in a decade.';

const KEYS = {
  /** Not indexed by Zotero: the text comes from the PDF (extraction, then the disk cache). */
  fromPdf: 'BNCH2345',
  fromPdfAtt: 'BPDF2345',
  /** Indexed completely: the text comes from `.zotero-ft-cache`. */
  indexed: 'BIDX2345',
  indexedAtt: 'BIPF2345',
};

const WORDS =
  'ice sheet ocean warming glacier basal melt grounding line shelf buttressing sea level rise model forcing observation satellite altimetry gravity flux discharge surface mass balance snowfall runoff'.split(
    ' ',
  );

/** About 45 lines of 60–80 characters per page (a dense journal page), seeded, never the query words. */
function pageLines(page: number): string[] {
  let seed = page * 7919;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const lines = [`${page} Section ${page}`];
  for (let l = 0; l < 45; l++) {
    let line = '';
    while (line.length < 60 + next() * 20) line += `${WORDS[Math.floor(next() * WORDS.length)]} `;
    lines.push(line.trim());
  }
  if (page === TARGET_PAGE) lines.splice(20, 0, SENTENCE);
  return lines;
}

const rows: TimingRow[] = [];
const { once } = timers(rows, 1);
let dir: string;
let baseEnv: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zoteus-bench-fulltext-'));
  const dataDir = join(dir, 'Zotero');
  mkdirSync(dataDir);
  const pages = Array.from({ length: PAGES }, (_, i) => pageLines(i + 1));
  const pdf = await once(
    `write the ${PAGES}-page PDF (project's writer)`,
    async () => makePdf({ pages, title: 'Bench book' }),
    (b) => `${(b.length / 1e6).toFixed(1)} MB`,
  );
  // What the desktop's index would hold: the pages' text, a form feed after each page.
  const ftCache = pages.map((lines) => `${lines.join('\n')}\f`).join('');
  const attachment = (key: string) => ({
    key,
    title: 'Full Text PDF',
    contentType: 'application/pdf',
    filename: 'book.pdf',
    linkMode: 'imported_file' as const,
  });
  await buildZoteroDb(join(dataDir, 'zotero.sqlite'), {
    user: { userID: 1, username: 'bench' },
    libraries: [
      {
        type: 'user',
        items: [
          {
            key: KEYS.fromPdf,
            itemType: 'book',
            fields: { title: 'A long book, not indexed' },
            attachments: [attachment(KEYS.fromPdfAtt)],
          },
          {
            key: KEYS.indexed,
            itemType: 'book',
            fields: { title: 'A long book, indexed' },
            attachments: [
              {
                ...attachment(KEYS.indexedAtt),
                fulltext: { content: ftCache, indexedPages: PAGES, totalPages: PAGES },
              },
            ],
          },
        ],
      },
    ],
  });
  for (const key of [KEYS.fromPdfAtt, KEYS.indexedAtt]) {
    mkdirSync(join(dataDir, 'storage', key), { recursive: true });
    writeFileSync(join(dataDir, 'storage', key, 'book.pdf'), pdf);
  }
  baseEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    ZOT_CONFIG_DIR: join(dir, 'config'),
    ZOTEUS_DATA_DIR: join(dir, 'data'),
    ZOTERO_DATA_DIR: dataDir,
    // No desktop app and no Web API: the library is read from zotero.sqlite.
    ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api',
    ZOTERO_API_URL: 'http://127.0.0.1:9',
    NO_COLOR: '1',
  };
}, 300_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  printTimingRows(
    `zot pdf KEY --q "${QUERY}" on a ${PAGES}-page PDF (whole processes: median of ${PROCS}; "${QUERY}" is on page ${TARGET_PAGE})`,
    rows,
  );
});

interface PdfAnswer {
  source: string;
  totalPages: number | null;
  passages: Array<{ page?: number; pageApprox?: number }>;
}

/** One `zot pdf` process: its wall time and its answer, checked (source, passage on the right page). */
function zotPdf(key: string, cacheDir: string, source: string): { ms: number; data: PdfAnswer } {
  const t = performance.now();
  const r = spawnSync(process.execPath, [ZOT, 'pdf', key, '--q', QUERY, '--limit', '1'], {
    env: { ...baseEnv, ZOT_CACHE_DIR: cacheDir },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const ms = performance.now() - t;
  const envelope = JSON.parse(r.stdout) as { ok: boolean; data: PdfAnswer };
  if (envelope.ok !== true) throw new Error(r.stdout);
  expect(envelope.data.source).toBe(source);
  expect(envelope.data.passages[0]?.page).toBe(TARGET_PAGE);
  return { ms, data: envelope.data };
}

function row(what: string, times: number[], data: PdfAnswer, note: string): void {
  rows.push({
    what,
    ms: median(times),
    note: `${data.source}, page ${data.passages[0]?.page} of ${data.totalPages}; ${note}; min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)} ms`,
  });
}

it('measures zot pdf: extraction, disk cache, .zotero-ft-cache', async () => {
  if (!existsSync(join(ROOT, 'dist', 'bin', 'zot.js'))) {
    rows.push({ what: 'processes', ms: NaN, note: 'skipped: run `npm run build` first' });
    return;
  }
  const pdfPath = join(dir, 'Zotero', 'storage', KEYS.fromPdfAtt, 'book.pdf');
  const bytes = readFileSync(pdfPath);
  await once(
    'in process: extractPdf (pdfjs) alone',
    () => extractPdf(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), { outline: true }),
    (d) => `${d.totalPages} pages, ${(d.text.length / 1e6).toFixed(2)} M characters`,
  );

  const version = spawnSync(process.execPath, [ZOT, '--version'], { env: baseEnv, encoding: 'utf8' });
  expect(version.status).toBe(0);
  const versionTimes: number[] = [];
  for (let i = 0; i < PROCS; i++) {
    const t = performance.now();
    spawnSync(process.execPath, [ZOT, '--version'], { env: baseEnv });
    versionTimes.push(performance.now() - t);
  }
  rows.push({ what: 'process: zot --version (floor)', ms: median(versionTimes), note: 'start-up only' });

  // First run: a new, empty cache directory for every process.
  zotPdf(KEYS.fromPdf, join(dir, 'cache-warmup'), 'pdf');
  const first: number[] = [];
  let last: PdfAnswer | undefined;
  for (let i = 0; i < PROCS; i++) {
    const r = zotPdf(KEYS.fromPdf, join(dir, `cache-first-${i}`), 'pdf');
    first.push(r.ms);
    last = r.data;
  }
  row('process: first run (pdfjs extraction)', first, last!, 'empty cache');

  // Second run: the cache the first run wrote.
  const cacheDir = join(dir, 'cache-first-0');
  const entries = readdirSync(join(cacheDir, 'fulltext'));
  const entrySize = statSync(join(cacheDir, 'fulltext', entries[0]!)).size;
  const second: number[] = [];
  for (let i = 0; i < PROCS; i++) {
    const r = zotPdf(KEYS.fromPdf, cacheDir, 'pdf');
    second.push(r.ms);
    last = r.data;
  }
  row(
    'process: second run (disk cache)',
    second,
    last!,
    `${entries.length} entry of ${(entrySize / 1e6).toFixed(2)} MB`,
  );

  // The desktop's complete index: no extraction, no disk cache needed.
  const ftCacheDir = join(dir, 'cache-ft');
  zotPdf(KEYS.indexed, ftCacheDir, 'ftCache');
  const indexed: number[] = [];
  for (let i = 0; i < PROCS; i++) {
    const r = zotPdf(KEYS.indexed, ftCacheDir, 'ftCache');
    indexed.push(r.ms);
    last = r.data;
  }
  row('process: complete .zotero-ft-cache', indexed, last!, 'form feeds: exact pages');
  expect(existsSync(join(ftCacheDir, 'fulltext'))).toBe(false);
}, 600_000);
