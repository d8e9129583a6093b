#!/usr/bin/env node
/**
 * `npm run demo`: a short tour of `zot` against a realistic sample Zotero library, offline and
 * without an API key. The sample `zotero.sqlite` (nested collections, several item types,
 * notes, a trashed item, a group library) is built in a throw-away home directory with the
 * project's own fixture builder, so nothing of the user's data or configuration is touched.
 * Every command is the real binary, exactly as an agent would run it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSampleLibrary, SAMPLE_KEYS } from '../dist/demo/sample/index.js';

const zot = fileURLToPath(new URL('../bin/zot', import.meta.url));
const home = mkdtempSync(join(tmpdir(), 'zoteus-demo-'));
const dataDir = join(home, 'Zotero');
const env = {
  PATH: process.env.PATH,
  HOME: home,
  ZOT_CONFIG_DIR: join(home, 'config'),
  ZOT_CACHE_DIR: join(home, 'cache'),
  ZOTEUS_DATA_DIR: join(home, 'data'),
  ZOTERO_DATA_DIR: dataDir,
  // The tour reads the sample database, never a desktop app that happens to be running.
  ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9/api',
  NO_COLOR: '1',
};

function run(title, args, { table = false, expectCode = 0 } = {}) {
  const shown = args.map((a) => (/[\s"]/.test(a) ? `'${a}'` : a)).join(' ');
  process.stdout.write(`\n=== ${title}\n$ zot ${shown}\n`);
  const r = spawnSync(process.execPath, [zot, ...args], {
    env: { ...env, ZOT_FORMAT: table ? 'table' : 'json' },
    encoding: 'utf8',
  });
  if (table) process.stdout.write(r.stdout);
  else
    for (const line of r.stdout.trim().split('\n').filter(Boolean))
      process.stdout.write(`${JSON.stringify(JSON.parse(line), null, 2)}\n`);
  if (r.stderr.trim()) process.stdout.write(`[stderr] ${r.stderr.trim()}\n`);
  process.stdout.write(`(exit ${r.status})\n`);
  if (r.status !== expectCode) throw new Error(`zot ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}

try {
  await buildSampleLibrary(join(dataDir, 'zotero.sqlite'));
  process.stdout.write(`Sample library built at ${dataDir} (no API key, no network).\n`);

  run('What this installation reaches: the desktop data, read directly', ['whoami']);
  run('Every collection, sorted by name (a table on a terminal)', ['collection', 'list'], { table: true });
  run(
    'A search: every word must match, case- and accent-insensitively',
    ['search', 'sea level', '--limit', '5'],
    {
      table: true,
    },
  );
  run(
    'Reading one item: metadata, creators, abstract, tags, notes',
    ['read', SAMPLE_KEYS.user.items.seaLevelArticle],
    {
      table: true,
    },
  );
  run('A dry-run library write: the planned change, offline, no key needed', [
    'collection',
    'create',
    'Reading list',
    '--parent',
    SAMPLE_KEYS.user.collections.climate,
    '--dry-run',
  ]);

  const rows = join(home, 'rows.json');
  writeFileSync(
    rows,
    JSON.stringify([
      {
        item_key: SAMPLE_KEYS.user.items.seaLevelArticle,
        study: 'Church & White 2011',
        finding: 'Sea-level rise accelerated.',
        quotation: 'find an acceleration since the 1990s',
        coverage: 'abstract-only',
        support: 'unverified',
      },
    ]),
  );
  run(
    'An evidence table from rows an agent gathered (Markdown)',
    ['evidence-table', '--question', 'Has sea-level rise accelerated?', '--rows', rows],
    { table: true },
  );

  run('A key that names nothing is a typed error with a stable exit code', ['read', 'NOPE'], {
    expectCode: 4,
  });
  process.stdout.write(
    '\nDone. Next: `zot schema` lists every command; set ZOTERO_API_KEY for cloud writes; add `zot mcp` to your MCP client.\n',
  );
} finally {
  rmSync(home, { recursive: true, force: true });
}
