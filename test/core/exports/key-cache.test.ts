/**
 * The citation keys of a desktop library kept between processes (key-cache.ts): an export of a
 * few items answers from them with the keys a whole-library computation gives, suffixes
 * included; any change to zotero.sqlite makes them again; a Better BibTeX key that appears for
 * an exported item is used, not the kept one.
 */
import Database from 'better-sqlite3';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildLargeLibrary } from '../../../src/demo/sample/index.js';
import { sandbox } from '../../support/cli.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { retitle } from '../local/helpers.js';

let box: ReturnType<typeof sandbox>;
let env: Record<string, string>;
let db: string;
let cacheDir: string;
type Key = { item_key: string; citation_key: string; source: string };

beforeAll(async () => {
  box = sandbox();
  db = join(box.env.ZOTERO_DATA_DIR as string, 'zotero.sqlite');
  await buildLargeLibrary(db, { items: 600, collections: 20, groupItems: 50 });
  env = Object.fromEntries(
    Object.entries({
      ...box.env,
      ZOTEUS_LOCAL_API_URL: 'http://127.0.0.1:9',
      ZOTERO_API_URL: 'http://127.0.0.1:9',
    }).filter((e): e is [string, string] => e[1] !== undefined),
  );
  cacheDir = join(env.ZOT_CACHE_DIR ?? join(box.dir, 'cache'), 'citation-keys');
}, 120_000);
afterAll(() => box?.cleanup());

async function keysOf(args: string[]): Promise<Key[]> {
  const r = await zotAt(['export', ...args], { env });
  expect([r.code, r.code === 0 ? '' : r.stdout]).toEqual([0, '']);
  return (r.json().data as { keys: Key[] }).keys;
}

/** The keys of the whole library's top-level items, page after page (each answer is bounded). */
async function everyKey(): Promise<Key[]> {
  const out: Key[] = [];
  for (let start: number | undefined = 0; start !== undefined;) {
    const r = await zotAt(['export', '--all', '--limit', '1000', '--start', String(start)], { env });
    expect(r.code).toBe(0);
    const data = r.json().data as { keys: Key[]; nextStart?: number };
    out.push(...data.keys);
    start = data.nextStart;
  }
  return out;
}

const keptFiles = () => {
  try {
    return readdirSync(cacheDir).filter((f) => f.endsWith('.sqlite'));
  } catch {
    return [];
  }
};

describe('kept citation keys', () => {
  let whole: Map<string, Key>;
  let clashing: Key[];

  it('a whole-library export keeps its keys; exports of single items then give the same keys, suffixes included', async () => {
    // Clashes first: items of one first author and year given the title of the first of them.
    const first = await everyKey();
    const groups = new Map<string, string[]>();
    for (const k of first) {
      const m = /^([a-z]+)_.+_(\d{4})$/.exec(k.citation_key);
      if (m) groups.set(`${m[1]}|${m[2]}`, [...(groups.get(`${m[1]}|${m[2]}`) ?? []), k.item_key]);
    }
    const w = new Database(db);
    const lib = w.prepare("SELECT libraryID FROM libraries WHERE type = 'user'").pluck().get() as number;
    const titleOf = w.prepare(
      `SELECT v.value FROM items i JOIN itemData d ON d.itemID = i.itemID JOIN fields f ON f.fieldID = d.fieldID
       JOIN itemDataValues v ON v.valueID = d.valueID WHERE i.key = ? AND f.fieldName = 'title'`,
    );
    for (const keys of [...groups.values()].filter((g) => g.length > 1).slice(0, 6)) {
      const title = titleOf.pluck().get(keys[0]) as string;
      for (const key of keys.slice(1)) retitle(w, lib, key, title);
    }
    w.close();
    rmSync(cacheDir, { recursive: true, force: true });

    const all = await everyKey();
    whole = new Map(all.map((k) => [k.item_key, k]));
    expect(keptFiles()).toHaveLength(1);
    clashing = all.filter((k) => /-\d+$/.test(k.citation_key)).slice(0, 8);
    expect(clashing.length).toBeGreaterThan(3);
    const sample = [...clashing, ...all.slice(0, 4)];
    for (const k of sample) expect(await keysOf([k.item_key])).toEqual([k]);
    expect(await keysOf(sample.map((k) => k.item_key))).toEqual(sample);
  });

  it('are what answers: a kept key is read back as it is (so a stale file would show)', async () => {
    const [file] = keptFiles();
    const target = clashing[0]!;
    const kept = new Database(join(cacheDir, file!));
    kept
      .prepare('UPDATE keys SET citation_key = ? WHERE item_key = ?')
      .run('kept_marker_1999', target.item_key);
    kept.close();
    expect((await keysOf([target.item_key]))[0]!.citation_key).toBe('kept_marker_1999');
  });

  it('are made again once zotero.sqlite changes, with the keys the change gives', async () => {
    const target = clashing[0]!;
    const w = new Database(db);
    const lib = w.prepare("SELECT libraryID FROM libraries WHERE type = 'user'").pluck().get() as number;
    // The item takes a title of its own: its key loses the clash, and nothing kept says otherwise.
    retitle(w, lib, target.item_key, 'Zyzzogeton unique monograph');
    w.close();
    const now = (await keysOf([target.item_key]))[0]!;
    expect(now.citation_key).not.toBe('kept_marker_1999');
    expect(now.citation_key).toMatch(/_zyzzogeton_/);
    const all = new Map((await everyKey()).map((k) => [k.item_key, k]));
    expect(all.get(target.item_key)).toEqual(now);
    for (const k of clashing.slice(1)) expect((await keysOf([k.item_key]))[0]).toEqual(all.get(k.item_key));
  });

  it("a Better BibTeX key that appears for an exported item is that item's key, not the kept one", async () => {
    const target = clashing[1]!;
    await keysOf([target.item_key]); // kept for the current state
    const w = new Database(db, { readonly: true });
    const row = w.prepare('SELECT itemID, libraryID FROM items WHERE key = ?').get(target.item_key) as {
      itemID: number;
      libraryID: number;
    };
    w.close();
    const bbt = new Database(join(box.env.ZOTERO_DATA_DIR as string, 'better-bibtex.sqlite'));
    bbt.exec(`CREATE TABLE citationkey (itemID NOT NULL PRIMARY KEY, itemKey NOT NULL, libraryID NOT NULL,
      citationKey NOT NULL CHECK (citationKey <> ''), pinned CHECK (pinned in (0, 1)), UNIQUE (libraryID, itemKey))`);
    bbt
      .prepare('INSERT INTO citationkey VALUES (?, ?, ?, ?, ?)')
      .run(row.itemID, target.item_key, row.libraryID, 'bbtPinnedKey2001', 1);
    bbt.close();
    expect(await keysOf([target.item_key])).toEqual([
      { item_key: target.item_key, citation_key: 'bbtPinnedKey2001', source: 'better-bibtex' },
    ]);
    void whole;
  });
});
