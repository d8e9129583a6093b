#!/usr/bin/env node
/**
 * CLI start-up benchmark: `zot --version` and `zot schema` against `node -e 0` on the same
 * machine, median of N runs each, interleaved so machine noise hits all three alike.
 * Targets (issue 2): --version within 2.5x, schema within 3.5x of bare node.
 *
 * Given a zotero.sqlite, it times the one-shot reads on it too (issue 24: read, collection
 * list, search and tag list within 1.5x, semantic-search within 2x of bare node), with no
 * desktop app (the local API address answers nothing) and the search indexes built before
 * the timed rounds:
 *
 *   npm run build && node bench/startup.mjs [runs] [path/to/zotero.sqlite]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const runs = Number(process.argv[2] ?? 21);
const database = process.argv[3] === undefined ? undefined : resolve(process.argv[3]);
const zot = fileURLToPath(new URL('../bin/zot', import.meta.url));
// A home of its own: no config, and the V8 code cache bin/zot keeps ($ZOT_CACHE_DIR/v8) is
// made by the first run and read by the others, as a user's is.
const home = mkdtempSync(join(tmpdir(), 'zoteus-bench-startup-'));
process.on('exit', () => rmSync(home, { recursive: true, force: true }));
const env = {
  PATH: process.env.PATH,
  HOME: home,
  ZOT_CACHE_DIR: join(home, 'cache'),
  NO_COLOR: '1',
  ...(database
    ? {
        ZOTERO_DATA_DIR: dirname(database),
        ZOTEUS_DATA_DIR: join(home, 'data'),
        ZOT_CONFIG_DIR: join(home, 'config'),
        // Nothing answers there: the reads go to zotero.sqlite, as with the desktop app closed.
        ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9',
        ZOTERO_API_URL: 'http://127.0.0.1:9',
        // Indexes built at once, in the warm-up round, never in the background of a timed one.
        ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0',
      }
    : {}),
};

const cases = {
  'node -e 0': [process.execPath, ['-e', '0']],
  'zot --version': [process.execPath, [zot, '--version']],
  'zot schema': [process.execPath, [zot, 'schema']],
  ...(database ? readCases(database) : {}),
};

/** The one-shot reads on `path`: an item's key and a word of its title from the database itself. */
function readCases(path) {
  const Database = createRequire(import.meta.url)('better-sqlite3');
  const db = new Database(path, { readonly: true, fileMustExist: true });
  const row = db
    .prepare(
      `SELECT i.key, v.value AS title FROM items i
         JOIN itemTypes t ON t.itemTypeID = i.itemTypeID
         JOIN itemData d ON d.itemID = i.itemID JOIN fields f ON f.fieldID = d.fieldID AND f.fieldName = 'title'
         JOIN itemDataValues v ON v.valueID = d.valueID
       WHERE t.typeName NOT IN ('note', 'attachment', 'annotation') ORDER BY i.itemID LIMIT 1`,
    )
    .get();
  db.close();
  if (!row) throw new Error(`${path} holds no regular item with a title`);
  const word =
    String(row.title)
      .split(/\W+/)
      .find((w) => w.length >= 5) ?? String(row.title);
  return {
    'zot read': [process.execPath, [zot, 'read', row.key]],
    'zot collection list': [process.execPath, [zot, 'collection', 'list']],
    'zot search': [process.execPath, [zot, 'search', word]],
    'zot tag list': [process.execPath, [zot, 'tag', 'list']],
    'zot semantic-search': [process.execPath, [zot, 'semantic-search', word]],
  };
}

const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
// One round not counted: it writes the code cache and, on a database, builds the indexes.
for (const [name, [cmd, args]] of Object.entries(cases)) {
  const r = spawnSync(cmd, args, { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${name} exited ${r.status}: ${r.stderr}`);
}
for (let i = 0; i < runs; i += 1) {
  for (const [name, [cmd, args]] of Object.entries(cases)) {
    const start = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { env, encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`${name} exited ${r.status}: ${r.stderr}`);
    times[name].push(ms);
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const base = median(times['node -e 0']);
console.log(`runs: ${runs} each (median), node ${process.version}`);
for (const name of Object.keys(cases)) {
  const m = median(times[name]);
  console.log(`${name.padEnd(20)} ${m.toFixed(1).padStart(7)} ms  ${(m / base).toFixed(2)}x node -e 0`);
}
