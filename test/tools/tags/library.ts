/**
 * A crafted zotero.sqlite for the tag audit: every kind of finding (unknown tags, synonyms,
 * near-duplicates by case, accents, hyphenation and plural, items missing a required tier),
 * a collection with a subcollection for the scope, an automatic tag, a trashed item and a
 * standalone note. No API key: the router reads the database.
 */
import { join } from 'node:path';
import { buildZoteroDb } from '../../support/zotero-sqlite/index.js';
import { depsFor, mcpClient, type Mcp } from '../items/read/setup.js';
import { runZot, sandbox, type RunResult } from '../../support/cli.js';
import type { Deps } from '../../../src/core/tool.js';

export const K = {
  climate: 'CLIM2345',
  ice: 'ICE23456',
  ml: 'MLCL2345',
  a: 'AAAA2345',
  b: 'BBBB2345',
  c: 'CCCC2345',
  d: 'DDDD2345',
  e: 'EEEE2345',
  f: 'FFFF2345',
  note: 'NNNN2345',
  trashed: 'TTTT2345',
} as const;

export const VOCABULARY = [
  { term: 'Deep Learning', synonyms: ['DL'], tier: 'method' },
  { term: 'Survey', tier: 'method' },
  { term: 'Sea Level', tier: 'topic' },
  { term: 'Ice Sheet', tier: 'topic' },
  { term: 'Neural Network', tier: 'topic' },
  'to-read',
];

const NOWHERE = 'http://127.0.0.1:9';

export interface Crafted {
  env: Record<string, string>;
  deps(): Deps;
  zot(args: string[], stdin?: string): Promise<RunResult>;
  mcp(): Promise<Mcp>;
  dir: string;
  close(): Promise<void>;
}

export async function startCrafted(): Promise<Crafted> {
  const box = sandbox();
  const dataDir = box.env.ZOTERO_DATA_DIR!;
  await buildZoteroDb(join(dataDir, 'zotero.sqlite'), {
    user: { userID: 4242, username: 'auditor' },
    libraries: [
      {
        type: 'user',
        collections: [
          { key: K.climate, name: 'Climate', collections: [{ key: K.ice, name: 'Ice' }] },
          { key: K.ml, name: 'ML' },
        ],
        items: [
          // Climate: a synonym-free, tier-complete item; an accent/case variant; a plural variant.
          {
            key: K.a,
            itemType: 'journalArticle',
            fields: { title: 'A' },
            collections: [K.climate],
            tags: ['Sea Level', 'Survey', 'ocean'],
          },
          {
            key: K.b,
            itemType: 'journalArticle',
            fields: { title: 'B' },
            collections: [K.climate],
            tags: ['sea level', 'Océan'],
          },
          // Ice (subcollection of Climate): hyphenation and plural variants of a vocabulary term.
          {
            key: K.c,
            itemType: 'journalArticle',
            fields: { title: 'C' },
            collections: [K.ice],
            tags: ['Ice-Sheets', 'Survey'],
          },
          // ML: a synonym, a near-duplicate pair outside the vocabulary, a similar-but-unknown tag.
          {
            key: K.d,
            itemType: 'journalArticle',
            fields: { title: 'D' },
            collections: [K.ml],
            tags: ['DL', 'Neural Networks', 'transformer', { tag: 'Imported Subject', type: 1 }],
          },
          {
            key: K.e,
            itemType: 'journalArticle',
            fields: { title: 'E' },
            collections: [K.ml],
            tags: ['Transformers', 'Deep Learning', 'Neural Netwerk'],
          },
          // Outside every collection.
          { key: K.f, itemType: 'book', fields: { title: 'F' }, tags: ['to-read', 'Children\'s "books"'] },
          { key: K.note, itemType: 'note', note: '<p>standalone</p>', tags: ['scratch'] },
          {
            key: K.trashed,
            itemType: 'journalArticle',
            fields: { title: 'T' },
            deleted: true,
            tags: ['Trashed Only'],
          },
        ],
      },
    ],
  });
  const env = { ...box.env, ZOTEUS_LOCAL_API_URL: NOWHERE, ZOTERO_API_URL: NOWHERE };
  const opened: Deps[] = [];
  return {
    env,
    dir: box.dir,
    deps: () => {
      const d = depsFor(env);
      opened.push(d);
      return d;
    },
    zot: (args, stdin) => runZot(args, { env, ...(stdin !== undefined ? { stdin } : {}) }),
    mcp: () =>
      mcpClient({ ZOTERO_DATA_DIR: dataDir, ZOTEUS_LOCAL_API_URL: NOWHERE, ZOTEUS_READ_ONLY: 'true' }),
    close: async () => {
      for (const d of opened) await d.services.close();
      box.cleanup();
    },
  };
}
