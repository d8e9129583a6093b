/**
 * `--stream` pages through everything a listing would page through (the built CLI, needs
 * `npm run build`): on a 20,000-item zotero.sqlite every top-level item, each once, with the
 * process's resident memory about that of a 2,000-item stream; on the Web API test server
 * every item, one request per page; a tool without `nextStart` continues from start + rows.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { largeLibrarySpec } from '../../../../src/demo/sample/index.js';
import { FIXTURE_ZOT, runZot, sandbox } from '../../../support/cli.js';
import { buildZoteroDb } from '../../../support/zotero-sqlite/index.js';
import { startWorld, type World } from '../../../core/library/world.js';

const NOWHERE = 'http://127.0.0.1:9';
let box: ReturnType<typeof sandbox>;
let rssProbe: string;

beforeAll(() => {
  box = sandbox();
  // Preloaded into the zot process: its peak resident memory, written when it exits.
  rssProbe = join(box.dir, 'rss.mjs');
  writeFileSync(
    rssProbe,
    `import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(process.env.RSS_OUT, String(process.resourceUsage().maxRSS)));\n`,
  );
});
afterAll(() => box.cleanup());

type Line = {
  ok: boolean;
  data?: { key: string; data?: Record<string, unknown> };
  summary?: Record<string, unknown>;
};
const lines = (stdout: string): Line[] =>
  stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Line);

async function desktop(name: string, items: number): Promise<Record<string, string>> {
  const dataDir = join(box.dir, name);
  mkdirSync(dataDir, { recursive: true });
  await buildZoteroDb(join(dataDir, 'zotero.sqlite'), {
    ...largeLibrarySpec({ items, collections: 20, groupItems: 0, fulltextShare: 0 }),
  });
  return { ...box.env, ZOTERO_DATA_DIR: dataDir, ZOTEUS_LOCAL_API_URL: NOWHERE, ZOTERO_API_URL: NOWHERE };
}

async function streamed(env: Record<string, string>, args: string[], heapMb?: number) {
  const out = join(box.dir, `rss-${Math.random().toString(36).slice(2)}`);
  const heap = heapMb === undefined ? '' : ` --max-old-space-size=${heapMb}`;
  const r = await runZot(args, {
    env: { ...env, NODE_OPTIONS: `--import=${rssProbe}${heap}`, RSS_OUT: out },
    timeoutMs: 400_000,
  });
  return { r, rows: lines(r.stdout), maxRssKb: Number(readFileSync(out, 'utf8')) };
}

describe('--stream on zotero.sqlite', () => {
  it('zot list --stream emits every top-level item once, then the summary; memory stays flat', async () => {
    const measured: Record<string, { page: number; stream: number }> = {};
    for (const [name, items] of [
      ['small', 2_000],
      ['large', 20_000],
    ] as const) {
      const env = await desktop(name, items);
      const page = await streamed(env, ['list', '--limit', '1']);
      // The 20,000-item stream runs with its heap held to 80 MB (below).
      const run = await streamed(env, ['list', '--stream'], name === 'large' ? 80 : undefined);
      expect(run.r.code).toBe(0);
      const n = (page.r.json().data as { totalResults: number }).totalResults;
      expect(n).toBeGreaterThan(items * 0.95);
      const data = run.rows.slice(0, -1);
      expect(data).toHaveLength(n);
      expect(new Set(data.map((l) => l.data?.key)).size).toBe(n);
      expect(data.every((l) => l.ok && l.data?.data?.parentItem === undefined)).toBe(true);
      expect(run.rows.at(-1)?.summary).toEqual({ count: n, total: n, has_more: false });
      measured[name] = { page: page.maxRssKb, stream: run.maxRssKb };
      if (name === 'large') {
        // Unbounded, V8 collects lazily and resident memory follows the heap's slack (about
        // 220 MB measured); with the heap held to 80 MB the 20,000 rows (about 37 MB of JSON
        // without their empty fields, several times that as objects) still all stream: only one
        // page is held at a time.
        expect(run.r.stdout.length).toBeGreaterThan(30_000_000);
      }
    }
    console.log(`max RSS (KB), one page vs the whole stream: ${JSON.stringify(measured)}`);
  }, 900_000);

  it('an explicit --limit caps the stream, --start offsets it', async () => {
    const env = await desktop('capped', 500);
    const { r, rows } = await streamed(env, ['list', '--stream', '--start', '10', '--limit', '90']);
    expect(r.code).toBe(0);
    expect(rows).toHaveLength(91);
    const all = lines((await runZot(['list', '--stream'], { env })).stdout);
    const total = all.at(-1)?.summary?.total;
    expect(rows.at(-1)?.summary).toEqual({ count: 90, total, has_more: true });
    expect(rows.slice(0, -1).map((l) => l.data?.key)).toEqual(all.slice(10, 100).map((l) => l.data?.key));
  }, 120_000);
});

describe('--stream on the Web API', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
    const lib = world.server.library('users/1');
    lib.addItems(Array.from({ length: 260 }, (_, i) => ({ title: `Paper ${i}` })));
  });
  afterAll(() => world.close());

  it('zot list --stream: all 260 items, each items/top request from the previous nextStart', async () => {
    world.server.clearLog();
    const r = await runZot(['list', '--stream'], {
      env: world.env({ ZOTEUS_LOCAL_API_URL: NOWHERE, ZOTERO_DATA_DIR: join(box.dir, 'none') }),
    });
    expect(r.code).toBe(0);
    const rows = lines(r.stdout);
    expect(rows).toHaveLength(261);
    expect(new Set(rows.slice(0, -1).map((l) => l.data?.key)).size).toBe(260);
    expect(rows.at(-1)?.summary).toEqual({ count: 260, total: 260, has_more: false });
    const pages = world.server.log.filter((e) => e.path.endsWith('/items/top'));
    // The first page is the command's own (25); then pages of 100, which the size bound cuts
    // shorter (75 items of this library, without their empty fields): each continues where the
    // last one ended.
    expect(pages.map((e) => [e.query.start ?? '0', e.query.limit])).toEqual([
      ['0', '25'],
      ['25', '100'],
      ['100', '100'],
      ['175', '100'],
      ['250', '100'],
    ]);
  });
});

describe('--stream without nextStart', () => {
  it('a tool that has no nextStart continues from start + rows received, up to totalResults', async () => {
    const r = await runZot(['fixture', 'list', '--count', '450', '--stream'], {
      env: box.env,
      bin: FIXTURE_ZOT,
    });
    expect(r.code).toBe(0);
    const rows = lines(r.stdout);
    expect(rows).toHaveLength(451);
    expect(rows.slice(0, -1).map((l) => (l.data as unknown as { name: string }).name)).toEqual(
      Array.from({ length: 450 }, (_, i) => `Row ${i}`),
    );
    expect(rows.at(-1)?.summary).toEqual({ count: 450, total: 450, has_more: false });
  });
});
