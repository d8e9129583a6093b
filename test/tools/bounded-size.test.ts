/**
 * Every tool's answer is bounded (conventions.md, "Bounded size"): each tool of the list is
 * called over MCP with the input that makes its answer largest (defaults that list the most, a
 * long document, an item with many long notes, large realistic batches), and the whole JSON-RPC
 * result message, as a stdio transport would send it, must stay within MESSAGE_BOUND. A tool
 * with no case here fails the test, so a tool added later cannot skip it.
 *
 * Two worlds, built once: a 20,000-item zotero.sqlite (large-library builder, with long
 * abstracts, long collection names, many tags, and an item with 60 long notes, hundreds of
 * tags and creators, a 600 KB document and an attachment with 400 annotations) read without a
 * key; and the Web API test server with 300 groups, an item with 60 long notes and thousands of
 * items to write to.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { MESSAGE_BOUND } from '../../src/core/items/read/bounds.js';
import type { AnyTool } from '../../src/core/tool.js';
import { CLI_VERSION } from '../../src/core/version.js';
import { buildMcpServer } from '../../src/surfaces/mcp/server.js';
import { tools } from '../../src/tools/index.js';
import { startZoteroServer, type ZoteroTestServer } from '../support/zotero-server/index.js';
import {
  buildZoteroDb,
  largeLibrarySpec,
  type CollectionSpec,
  type ItemSpec,
} from '../support/zotero-sqlite/index.js';
import { isolatedEnv } from '../surfaces/mcp/harness.js';
import { makePdf } from '../support/documents/index.js';
import { mkdirSync, writeFileSync } from 'node:fs';

const KEY = 'Zk3yS3cr3tAbCdEf12345678';
const ALICE = 1;
const NOWHERE = 'http://127.0.0.1:9';
/** The large library's group (largeLibrarySpec). */
const GROUP = 90001;

/** Keys of the worst-case objects. */
const W = {
  item: 'WRST2345',
  document: 'WDOC2345',
  annotated: 'WANN2345',
  standaloneNote: 'WNTE2345',
  firstNote: 'WNTA2345',
  webParent: 'WPRN2345',
  webPdf: 'WPDF2345',
  renameTag: 'bulk-renamed-tag',
};

/** Pronounceable filler text of about `chars` characters (seeded, so runs are alike). */
function filler(chars: number, seed = 1): string {
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pra', 'stro', 'gle', 'dun'];
  let x = seed;
  const words: string[] = [];
  let length = 0;
  while (length < chars) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const n = 2 + (x % 3);
    let w = '';
    for (let i = 0; i < n; i++) w += syllables[(x >> (i * 4)) % syllables.length];
    words.push(w);
    length += w.length + 1;
  }
  return words.join(' ').slice(0, chars);
}

const keyOf = (prefix: string, i: number): string => {
  const alphabet = '23456789ABCDEFGHIJKLMNPQRSTUVWXYZ';
  let n = i;
  let out = '';
  for (let d = 0; d < 4; d++) {
    out = alphabet[n % alphabet.length] + out;
    n = Math.floor(n / alphabet.length);
  }
  return `${prefix}${out}`;
};

function collectionKeys(tree: readonly CollectionSpec[]): string[] {
  return tree.flatMap((c) => [c.key as string, ...collectionKeys(c.collections ?? [])]);
}

function lengthenNames(tree: CollectionSpec[]): void {
  for (const c of tree) {
    c.name = `${c.name} ${filler(90, c.name.length)}`;
    lengthenNames(c.collections ?? []);
  }
}

/** The 600 KB document: 300 pages (form feeds), each with numbered headings and long paragraphs. */
function longDocument(): string {
  const pages: string[] = [];
  for (let p = 1; p <= 300; p++) {
    const lines: string[] = [];
    for (let s = 1; s <= 4; s++)
      lines.push(`${p}.${s} Section heading number ${p} ${s}`, filler(480, p * 10 + s));
    pages.push(lines.join('\n'));
  }
  return pages.join('\f');
}

function worstItems(collections: readonly string[]): ItemSpec[] {
  const worst: ItemSpec = {
    key: W.item,
    itemType: 'journalArticle',
    fields: {
      title: `The worst case: ${filler(280)}`,
      abstractNote: filler(12_000, 7),
      extra: filler(3_000, 8),
      publicationTitle: 'Journal of Bounded Answers',
      date: '2020',
      DOI: '10.1234/worst',
    },
    creators: Array.from({ length: 150 }, (_, i) => ({
      firstName: `Author${i}`,
      lastName: `Collaboration${i}`,
    })),
    tags: Array.from({ length: 300 }, (_, i) => `worst tag number ${i} ${filler(20, i)}`),
    collections: collections.slice(0, 40),
    dateAdded: '2001-01-01T00:00:00Z',
    dateModified: '2030-01-01T00:00:00Z',
    notes: Array.from({ length: 60 }, (_, i) => ({
      ...(i === 0 ? { key: W.firstNote } : {}),
      note: `<h1>Note ${i}</h1><p>${filler(30_000, 100 + i)}</p>`,
      dateModified: `2029-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`,
    })),
    attachments: [
      {
        key: W.document,
        title: 'Full Text PDF',
        filename: 'worst.pdf',
        contentType: 'application/pdf',
        fulltext: { content: longDocument(), indexedPages: 300, totalPages: 300 },
      },
      {
        key: W.annotated,
        title: 'Annotated PDF',
        filename: 'annotated.pdf',
        contentType: 'application/pdf',
        annotations: Array.from({ length: 400 }, (_, i) => ({
          type: 'highlight' as const,
          text: filler(300, 1000 + i),
          comment: filler(100, 2000 + i),
          pageLabel: String(1 + (i % 40)),
        })),
      },
      ...Array.from({ length: 23 }, (_, i) => ({
        title: `Supplement ${i}`,
        filename: `supplement-${i}.pdf`,
        contentType: 'application/pdf',
      })),
    ],
  };
  const note: ItemSpec = {
    key: W.standaloneNote,
    itemType: 'note',
    note: `<p>${filler(200_000, 3)}</p>`,
    dateModified: '2030-01-01T00:00:01Z',
    dateAdded: '2001-01-01T00:00:01Z',
  };
  return [worst, note];
}

/** A 20,000-item zotero.sqlite in `dataDir`, with the worst-case items among them. */
async function buildDesktop(dataDir: string): Promise<number> {
  const began = Date.now();
  const spec = largeLibrarySpec({ items: 20_000, groupItems: 500 });
  const user = spec.libraries[0]!;
  lengthenNames(user.collections ?? []);
  const keys = collectionKeys(user.collections ?? []);
  for (const [i, item] of (user.items ?? []).entries()) {
    const fields = (item.fields ??= {});
    // Long abstracts: about 2,500 characters each.
    fields.abstractNote = `${fields.abstractNote ?? ''} ${filler(1_500, i)}`;
    if (i < 3000) item.tags = [...(item.tags ?? []), `project ${i}: ${filler(40, i)}`];
  }
  user.items = [...worstItems(keys), ...(user.items ?? [])];
  // A desktop synced with 300 group libraries (zotero_whoami lists each with its route).
  for (let g = 1; g <= 300; g++) {
    spec.libraries.push({
      type: 'group',
      groupID: 70_000 + g,
      name: `Synced group ${g} ${filler(40, g)}`,
      items: [],
    });
  }
  await buildZoteroDb(join(dataDir, 'zotero.sqlite'), { ...spec, writeStorage: true });
  return Date.now() - began;
}

function seedWeb(server: ZoteroTestServer): { items: string[]; deletable: string[]; mergeable: string[] } {
  server.addUser({ userID: ALICE, username: 'alice' });
  server.addKey({
    key: KEY,
    userID: ALICE,
    access: {
      user: { library: true, files: true, notes: true, write: true },
      groups: { all: { library: true, write: true } },
    },
  });
  for (let g = 1; g <= 300; g++) {
    server.addGroup({ id: 1000 + g, name: `Group ${g} ${filler(50, g)}`, owner: ALICE, members: [] });
  }
  const lib = server.library(`users/${ALICE}`);
  const [parent] = lib.addItems([{ key: W.webParent, title: 'An item with many long notes' }]);
  lib.addItems([
    {
      key: W.webPdf,
      itemType: 'attachment',
      parentItem: parent,
      linkMode: 'imported_file',
      contentType: 'application/pdf',
      filename: 'long.pdf',
      title: 'Long PDF',
    },
  ]);
  lib.addItems(
    Array.from({ length: 60 }, (_, i) => ({
      itemType: 'note',
      parentItem: parent,
      note: `<p>${filler(30_000, 300 + i)}</p>`,
      tags: [{ tag: `note tag ${i}` }],
    })),
  );
  const items = lib.addItems(
    Array.from({ length: 3000 }, (_, i) => ({
      title: `Bulk item ${i}: ${filler(80, i)}`,
      abstractNote: filler(2_000, i),
      tags: [{ tag: W.renameTag }, { tag: `delete-me-${i % 400}` }],
    })),
  );
  const deletable = lib.addItems(Array.from({ length: 100 }, (_, i) => ({ title: `Deletable ${i}` })));
  // The merge's own: the deletion case removes the deletable items before it may run.
  const mergeable = lib.addItems(Array.from({ length: 100 }, (_, i) => ({ title: `Mergeable ${i}` })));
  // Saved searches with many long conditions: a page of definitions is held to the bound.
  lib.addSearches(
    Array.from({ length: 150 }, (_, i) => ({
      name: `Search ${i}: ${filler(200, i)}`,
      conditions: Array.from({ length: 20 }, (_, j) => ({
        condition: 'title',
        operator: 'contains',
        value: filler(200, i * 20 + j),
      })),
    })),
  );
  lib.addItems(
    [...deletable, ...mergeable].flatMap((key) =>
      Array.from({ length: 12 }, (_, i) => ({
        itemType: 'note',
        parentItem: key,
        note: `<p>child ${i}</p>`,
      })),
    ),
  );
  return { items, deletable, mergeable };
}

interface Connection {
  call(name: string, args: Record<string, unknown>): Promise<{ result: CallToolResult; bytes: number }>;
  close(): Promise<void>;
}

/** An SDK client on a server built by the MCP surface, measuring each answer as sent. */
async function connect(env: Record<string, string>): Promise<Connection> {
  const server = buildMcpServer({ tools, config: loadConfig(env), env, version: CLI_VERSION });
  const client = new Client({ name: 'bounded-size', version: '0.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const sizes = new Map<unknown, number>();
  const send = serverSide.send.bind(serverSide);
  serverSide.send = async (message, options) => {
    // What stdio writes: the message's JSON and a newline.
    if ('result' in message || 'error' in message) {
      sizes.set(message.id, Buffer.byteLength(`${JSON.stringify(message)}\n`, 'utf8'));
    }
    return send(message, options);
  };
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  let before = 0;
  return {
    async call(name, args) {
      before = Math.max(before, ...[...sizes.keys()].filter((k) => typeof k === 'number'), 0);
      const result = (await client.callTool({ name, arguments: args }, undefined, {
        timeout: 120_000,
      })) as CallToolResult;
      const ids = [...sizes.keys()].filter((k): k is number => typeof k === 'number' && k > before);
      const bytes = sizes.get(Math.max(...ids)) ?? NaN;
      return { result, bytes };
    },
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

type World = 'desktop' | 'web';
interface Case {
  world: World;
  args: Record<string, unknown>;
  /** What makes it large, for the test's name. */
  why: string;
  /** An error answer is expected (and bounded all the same). */
  error?: boolean;
}

const EVIDENCE_ROWS = Array.from({ length: 60 }, (_, i) => ({
  item_key: keyOf('EVDN', i + 1),
  study: `Study ${i + 1} (${2000 + (i % 25)})`,
  finding: `Finding ${i + 1}: ${filler(220, i)}.`,
  quotation: filler(320, 500 + i),
  page: 10 + i,
  page_exact: i % 2 === 0,
  coverage: 'passage',
  support: i % 3 === 0 ? 'uncertain' : 'supported',
  note: `n=${100 + i}; ${filler(40, i)}`,
}));

const VOCABULARY = Array.from({ length: 1000 }, (_, i) => ({
  term: `term ${i}`,
  synonyms: [`synonym ${i}`],
  tier: `tier ${i % 5}`,
}));
const TIERS = ['tier 0', 'tier 1', 'tier 2', 'tier 3', 'tier 4'];
/** A page of 45 long lines, 12 times in W.webPdf: the whole page is a quote found on every page. */
const LONG_PAGE = Array.from({ length: 45 }, (_, i) => filler(70, 900 + i));

const BIBTEX = Array.from(
  { length: 200 },
  (_, i) =>
    `@article{entry${i},\n  title = {Imported ${i}: ${filler(80, i)}},\n  author = {Author, Ada and Writer, Bob},\n  journal = {Journal ${i % 7}},\n  year = {${1990 + (i % 30)}}\n}`,
).join('\n\n');

function cases(web: { items: string[]; deletable: string[]; mergeable: string[] }): Record<string, Case[]> {
  const missing = Array.from({ length: 20 }, (_, i) => keyOf('ZZZZ', i));
  const batch = [...web.items.slice(0, 480), ...missing];
  return {
    zotero_whoami: [{ world: 'desktop', args: {}, why: 'a desktop with 302 libraries' }],
    zotero_groups: [
      { world: 'web', args: {}, why: '300 groups, default page' },
      { world: 'web', args: { limit: 500 }, why: '300 groups, the largest page' },
    ],
    zotero_list_collections: [
      { world: 'desktop', args: {}, why: '2,000 collections with long names, default page' },
      { world: 'desktop', args: { limit: 1000 }, why: 'the largest page' },
    ],
    zotero_manage_collections: [
      { world: 'desktop', args: { action: 'list' }, why: '2,000 collections, default page' },
      {
        world: 'web',
        args: { action: 'create', name: 'Bounded' },
        why: 'a write (its answer is small)',
      },
    ],
    zotero_saved_searches: [
      {
        world: 'web',
        args: { action: 'list' },
        why: '150 saved searches of 20 long conditions, default page',
      },
      { world: 'web', args: { action: 'list', limit: 100 }, why: 'the largest page' },
    ],
    zotero_manage_saved_searches: [
      {
        world: 'web',
        args: { action: 'create', name: 'Bounded', conditions: ['title contains bounded'] },
        why: 'a write (its answer is small)',
      },
    ],
    zotero_evidence_table: [
      { world: 'desktop', args: { question: 'What bounds an answer?', rows: EVIDENCE_ROWS }, why: '60 rows' },
      {
        world: 'desktop',
        args: { question: 'What bounds an answer?', rows: EVIDENCE_ROWS, format: 'csv' },
        why: '60 rows as CSV',
      },
    ],
    zotero_search_items: [
      { world: 'desktop', args: {}, why: '20,000 items, default page, the worst item first' },
      { world: 'desktop', args: { limit: 100 }, why: 'the largest page' },
      {
        world: 'desktop',
        args: { limit: 100, include_children: true, q: 'worst' },
        why: 'notes and long fields',
      },
      { world: 'web', args: { limit: 100 }, why: 'the largest page on the Web API' },
    ],
    zotero_get_item: [
      { world: 'desktop', args: { item_key: W.item }, why: '60 long notes, 300 tags, 150 creators' },
      { world: 'desktop', args: { item_key: W.annotated }, why: '400 annotations' },
      { world: 'desktop', args: { item_key: W.standaloneNote }, why: 'a 200 KB note' },
      { world: 'desktop', args: { item_key: W.item, max_chars: 100_000 }, why: 'the largest max_chars' },
    ],
    zotero_get_fulltext: [
      { world: 'desktop', args: { item_key: W.item }, why: 'a 600 KB document, its start' },
      { world: 'desktop', args: { item_key: W.item, outline: true }, why: '1,200 headings' },
      { world: 'desktop', args: { item_key: W.item, page_range: '1-300' }, why: 'every page' },
      { world: 'desktop', args: { item_key: W.item, q: 'section heading', limit: 25 }, why: '25 passages' },
    ],
    // The group library (500 items): an index build of the 20,000 items takes 10 s, and a hit's
    // size does not depend on the size of the library.
    zotero_index: [
      { world: 'desktop', args: { action: 'build', library_id: GROUP }, why: 'a build' },
      { world: 'desktop', args: { action: 'status' }, why: 'the status of the 20,000-item library' },
    ],
    zotero_semantic_search: [
      { world: 'desktop', args: { q: 'climate ocean model', library_id: GROUP }, why: 'default hits' },
      {
        world: 'desktop',
        args: { q: 'climate ocean model', library_id: GROUP, limit: 50 },
        why: 'the most hits',
      },
    ],
    zotero_list_tags: [
      { world: 'desktop', args: {}, why: 'thousands of tags, default page' },
      { world: 'desktop', args: { limit: 1000 }, why: 'the largest page' },
    ],
    zotero_stats: [{ world: 'desktop', args: {}, why: '20,000 items' }],
    zotero_schema: [{ world: 'web', args: {}, why: 'every item type of the schema' }],
    zotero_export: [
      { world: 'desktop', args: { all: true, limit: 1000 }, why: 'the largest page of BibTeX' },
      {
        world: 'desktop',
        args: { all: true, limit: 1000, format: 'csljson' },
        why: 'the largest page of CSL-JSON',
      },
      { world: 'web', args: { item_keys: web.items.slice(0, 100) }, why: '100 keys' },
    ],
    zotero_check_citations: [
      {
        world: 'desktop',
        args: {
          text: Array.from({ length: 3001 }, (_, i) => `[@collaboration${i}_worst_2020]`).join('\n'),
          kind: 'markdown',
        },
        why: '3,001 keys cited, 3,000 of them missing, each a few edits from one found',
      },
      {
        world: 'desktop',
        args: {
          text: Array.from({ length: 3000 }, (_, i) => `\\cite{missing_key_${i}}`).join('\n'),
          kind: 'tex',
        },
        why: '3,000 keys cited, all missing',
        error: true,
      },
    ],
    zotero_update_status: [
      {
        world: 'desktop',
        args: { all: true },
        why: 'a preview of the whole library of 20,000 items, Crossref unreachable: an entry of failed per candidate, up to the rows budget',
        error: true,
      },
    ],
    zotero_enrich: [
      {
        world: 'desktop',
        args: { all: true },
        why: 'a preview of the whole library of 20,000 items, Crossref unreachable: an entry of failed per item with empty fields, up to the rows budget',
        error: true,
      },
    ],
    zotero_check_retractions: [
      {
        world: 'desktop',
        args: { all: true },
        why: 'the default page of 1,000 items of 20,000, Crossref unreachable: an entry of failed per DOI, up to the rows budget',
        error: true,
      },
    ],
    zotero_format_bibliography: [
      { world: 'desktop', args: { q: 'worst', limit: 500 }, why: 'the largest page of long entries' },
      { world: 'web', args: { item_keys: web.items.slice(0, 100) }, why: '100 keys' },
      {
        world: 'desktop',
        args: { q: 'worst', limit: 500, format: 'html' },
        why: 'the largest page in HTML',
      },
    ],
    zotero_styles: [{ world: 'desktop', args: { limit: 250 }, why: 'every style available offline' }],
    zotero_sync: [
      { world: 'web', args: { since: 0 }, why: 'a library of 4,300 items since 0, default page' },
      { world: 'web', args: { since: 0, limit: 500 }, why: 'the largest page' },
    ],
    zotero_summarize: [
      { world: 'desktop', args: { all: true }, why: 'all: 20,000 items' },
      { world: 'desktop', args: {}, why: 'the default page, the worst item first' },
      { world: 'desktop', args: { limit: 100_000 }, why: 'the largest limit' },
      { world: 'web', args: { item_keys: web.items.slice(0, 100) }, why: '100 keys' },
      {
        world: 'desktop',
        args: {
          item_keys: [W.item, W.standaloneNote, ...Array.from({ length: 98 }, (_, i) => keyOf('ZZZZ', i))],
        },
        why: '100 keys, 98 of them missing',
        error: true,
      },
    ],
    zotero_create_items: [
      {
        world: 'web',
        args: {
          items: Array.from({ length: 200 }, (_, i) => ({
            itemType: 'journalArticle',
            title: `Created ${i}: ${filler(100, i)}`,
            abstractNote: filler(1_000, i),
          })),
        },
        why: '200 items',
      },
    ],
    zotero_import: [
      { world: 'web', args: { records: BIBTEX, format: 'bibtex' }, why: '200 BibTeX records' },
      {
        world: 'web',
        args: { identifiers: Array.from({ length: 100 }, (_, i) => `10.1234/unreachable.${i}`) },
        why: '100 DOIs that no resolver knows',
        error: true,
      },
    ],
    zotero_update_item: [
      {
        world: 'web',
        args: { item_key: web.items[0], fields: { abstractNote: filler(5_000, 9) } },
        why: 'a long field',
      },
    ],
    zotero_list_notes: [
      { world: 'web', args: { item_key: W.webParent }, why: '60 notes of 30,000 characters' },
      {
        world: 'web',
        args: { item_key: W.webParent, include_html: true, max_chars: 100_000 },
        why: 'HTML, largest max_chars',
      },
    ],
    zotero_list_annotations: [
      { world: 'desktop', args: { item_key: W.annotated }, why: '400 annotations of an attachment' },
      { world: 'desktop', args: { item_key: W.annotated, limit: 500 }, why: 'the largest limit' },
    ],
    zotero_get_attachment: [
      { world: 'desktop', args: { item_key: W.item }, why: 'the attachments of the worst item' },
    ],
    zotero_attachment_audit: [
      { world: 'desktop', args: {}, why: 'every attachment of 20,000 items, each file missing here' },
      { world: 'desktop', args: { limit: 500 }, why: 'the largest lists' },
    ],
    zotero_create_note: [
      { world: 'web', args: { parent_item: W.webParent, text: filler(50_000, 4) }, why: 'a long note' },
    ],
    zotero_create_annotation: [
      {
        world: 'web',
        args: { attachment_key: W.webPdf, quote: LONG_PAGE.join(' '), comment: filler(5_000, 9), page: 12 },
        why: 'a 45-line highlight with a long comment',
      },
      {
        world: 'web',
        args: { attachment_key: W.webPdf, quote: LONG_PAGE.join(' ') },
        why: 'a long quote on 12 pages: the candidates',
        error: true,
      },
    ],
    zotero_attach_file: [
      {
        world: 'web',
        args: {
          parent_item: W.webParent,
          content_base64: Buffer.from(filler(1_000_000, 6)).toString('base64'),
          filename: `${filler(200, 7).replace(/[^A-Za-z0-9]/g, '')}.txt`,
          title: filler(500, 8),
        },
        why: 'a 1 MB file with a long name and title',
      },
    ],
    zotero_manage_tags: [
      {
        world: 'web',
        args: { action: 'add_items', tag: 'batch', item_keys: batch },
        why: '500 items, 20 missing',
      },
      {
        world: 'web',
        args: { action: 'rename', tag: W.renameTag, new_name: 'renamed' },
        why: 'a tag on 3,000 items',
      },
      {
        world: 'web',
        args: { action: 'delete', tags: Array.from({ length: 400 }, (_, i) => `delete-me-${i}`) },
        why: '400 tags',
      },
    ],
    zotero_tag_audit: [
      {
        world: 'desktop',
        args: { vocabulary: VOCABULARY, required_tiers: TIERS },
        why: '1,000 terms, 5 tiers',
      },
      {
        world: 'desktop',
        args: { vocabulary: VOCABULARY, required_tiers: TIERS, limit: 1000 },
        why: 'the largest limit',
      },
    ],
    zotero_trash_items: [{ world: 'web', args: { item_keys: batch }, why: '500 items, 20 missing' }],
    zotero_history: [
      {
        world: 'web',
        args: { limit: 50 },
        why: 'the largest page of the journal the writes before it filled (500 items trashed, 100 deleted…)',
      },
    ],
    zotero_undo: [
      { world: 'web', args: { request_id: 'nosuchrequest' }, why: 'an unknown request id', error: true },
    ],
    zotero_delete_items: [
      { world: 'web', args: { item_keys: web.deletable }, why: '100 items with 1,200 children' },
    ],
    zotero_find_duplicates: [
      { world: 'desktop', args: { limit: 200 }, why: 'the largest page of groups of a 20,000-item library' },
    ],
    zotero_merge_items: [
      {
        world: 'web',
        args: { master_key: web.mergeable[0], item_keys: web.mergeable.slice(1) },
        why: 'a preview merging 99 items with 1,188 children',
      },
    ],
  };
}

describe('every tool answers within the size bound', () => {
  let server: ZoteroTestServer;
  let desktop: Connection;
  let webConn: Connection;
  let all: Record<string, Case[]>;
  let webItems: string[] = [];
  const webKeys = async () => webItems;
  let buildMs = 0;

  beforeAll(async () => {
    // No search index built in the background by a detached process while the test runs.
    const desktopEnv = isolatedEnv({
      ZOTEUS_LOCAL_API_URL: `${NOWHERE}/api`,
      ZOTEUS_INDEX_AUTO_MIN_ITEMS: '0',
    });
    buildMs = await buildDesktop(desktopEnv.ZOTERO_DATA_DIR!);
    // A figure to read, never to assert: the machines are shared.
    if (process.env.BOUNDED_SIZE_REPORT) console.log(`20,000-item library built in ${buildMs} ms`);
    server = await startZoteroServer();
    const web = seedWeb(server);
    webItems = web.items;
    all = cases(web);
    desktop = await connect(desktopEnv);
    const webEnv = isolatedEnv({
      ZOTERO_API_URL: server.url,
      ZOTERO_API_KEY: KEY,
      ZOTEUS_LOCAL: 'off',
      ZOTEUS_ALLOW_DELETE: 'true',
      // Resolvers that answer at once: every DOI is not found.
      ZOTEUS_CROSSREF_URL: `${server.url}/crossref`,
      ZOTEUS_DATACITE_URL: `${server.url}/datacite`,
      ZOTEUS_ARXIV_URL: `${server.url}/arxiv`,
    });
    const pdfDir = join(webEnv.ZOTERO_DATA_DIR!, 'storage', W.webPdf);
    mkdirSync(pdfDir, { recursive: true });
    writeFileSync(join(pdfDir, 'long.pdf'), makePdf({ pages: Array.from({ length: 12 }, () => LONG_PAGE) }));
    webConn = await connect(webEnv);
  }, 120_000);

  afterAll(async () => {
    await desktop?.close();
    await webConn?.close();
    await server?.close();
  });

  it('has a case for every tool of the list', () => {
    const missing = (tools as readonly AnyTool[]).map((t) => t.name).filter((name) => !all[name]?.length);
    expect(missing, 'tools without a bounded-size case in test/tools/bounded-size.test.ts').toEqual([]);
  });

  // Tool by tool, in the list's order, but the index is built before semantic search uses it.
  const names = (tools as readonly AnyTool[]).map((t) => t.name);
  const ordered = names.includes('zotero_index')
    ? ['zotero_index', ...names.filter((n) => n !== 'zotero_index')]
    : names;
  it.each(ordered.map((name) => [name] as const))(
    '%s answers within MESSAGE_BOUND',
    async (name) => {
      const list = all[name];
      expect(list, `no case for ${name}`).toBeDefined();
      for (const c of list!) {
        const conn = c.world === 'desktop' ? desktop : webConn;
        const t = Date.now();
        const { result, bytes } = await conn.call(name, c.args);
        const text = (result.content[0] as { text: string }).text;
        expect(Boolean(result.isError), `${name} (${c.why}): ${text.slice(0, 2000)}`).toBe(c.error === true);
        // BOUNDED_SIZE_REPORT=1 prints each answer's size, time and summary line.
        if (process.env.BOUNDED_SIZE_REPORT) {
          console.log(`${name} (${c.why}): ${bytes} bytes, ${Date.now() - t} ms: ${text.slice(0, 200)}`);
        }
        expect(bytes, `${name} (${c.why})`).toBeLessThanOrEqual(MESSAGE_BOUND);
        if (!result.isError) {
          // The text copy is the output itself: a client that passes only content loses nothing.
          expect(result.content).toHaveLength(2);
          const copy = JSON.parse((result.content[1] as { text: string }).text) as unknown;
          expect(copy, `${name} (${c.why}): the JSON text is structuredContent`).toEqual(
            result.structuredContent,
          );
        }
      }
    },
    120_000,
  );

  describe('continuing where a bounded answer stopped', () => {
    const structured = <T>(r: { result: CallToolResult }) => r.result.structuredContent as T;

    it('zotero_summarize: nextStart pages the library without gaps or repeats', async () => {
      type Page = { digests: Array<{ key: string }>; nextStart?: number; truncated?: boolean };
      const first = structured<Page>(await desktop.call('zotero_summarize', { all: true }));
      expect(first.truncated).toBe(true);
      const second = structured<Page>(
        await desktop.call('zotero_summarize', { all: true, start: first.nextStart }),
      );
      const both = structured<Page>(
        await desktop.call('zotero_summarize', { limit: first.digests.length + 5 }),
      );
      const keys = [...first.digests, ...second.digests].map((d) => d.key);
      expect(both.digests.map((d) => d.key)).toEqual(keys.slice(0, both.digests.length));
      expect(new Set(keys).size).toBe(keys.length);
    });

    it('zotero_summarize with item_keys: remaining names the keys that did not fit', async () => {
      type Keys = { digests: Array<{ key: string }>; remaining?: string[] };
      const keys = (await webKeys()).slice(0, 100);
      const got: string[] = [];
      let asked: string[] | undefined = keys;
      for (let round = 0; asked?.length && round < 10; round++) {
        const page: Keys = structured<Keys>(await webConn.call('zotero_summarize', { item_keys: asked }));
        if (round === 0) expect(page.remaining?.length).toBeGreaterThan(0);
        got.push(...page.digests.map((d) => d.key));
        asked = page.remaining;
      }
      expect(got).toEqual(keys);
    });

    it('zotero_get_item: offset reads a long field on, children_start the next children', async () => {
      type Item = {
        item: { data: { note: string } };
        truncatedFields?: Array<{ field: string; end?: number; length: number }>;
        children: Array<{ key: string }>;
        childrenTotal: number;
        nextChildrenStart?: number;
      };
      const note = structured<Item>(await desktop.call('zotero_get_item', { item_key: W.standaloneNote }));
      const cut = note.truncatedFields?.find((f) => f.field === 'note');
      expect(cut).toMatchObject({ start: 0, end: 10_000 });
      const on = structured<Item>(
        await desktop.call('zotero_get_item', { item_key: W.standaloneNote, offset: cut!.end }),
      );
      expect(on.truncatedFields?.find((f) => f.field === 'note')).toMatchObject({
        start: 10_000,
        end: 20_000,
      });
      expect(on.item.data.note.slice(0, 20)).not.toBe(note.item.data.note.slice(0, 20));

      const seen: string[] = [];
      let start: number | undefined = 0;
      for (let round = 0; start !== undefined && round < 50; round++) {
        const page: Item = structured<Item>(
          await desktop.call('zotero_get_item', { item_key: W.annotated, children_start: start }),
        );
        expect(page.childrenTotal).toBe(400);
        seen.push(...page.children.map((c) => c.key));
        start = page.nextChildrenStart;
      }
      expect(new Set(seen).size).toBe(400);
    });

    it('zotero_list_notes: nextStart pages the notes; note_key with offset reads one note on', async () => {
      type Notes = {
        notes: Array<{ key: string; text: string; end?: number; totalChars?: number }>;
        nextStart?: number;
        totalResults: number;
      };
      let total = 0;
      const seen: Notes['notes'] = [];
      let start: number | undefined = 0;
      for (let round = 0; start !== undefined && round < 60; round++) {
        const page: Notes = structured<Notes>(
          await webConn.call('zotero_list_notes', { item_key: W.webParent, start }),
        );
        seen.push(...page.notes);
        total = page.totalResults;
        start = page.nextStart;
      }
      // 60 seeded, and the one zotero_create_note added.
      expect(total).toBeGreaterThanOrEqual(60);
      expect(new Set(seen.map((n) => n.key)).size).toBe(total);
      const one = seen[0]!;
      let text = one.text;
      for (let offset = one.end; offset !== undefined;) {
        const more: Notes = structured<Notes>(
          await webConn.call('zotero_list_notes', { item_key: W.webParent, note_key: one.key, offset }),
        );
        text += more.notes[0]!.text;
        offset =
          more.notes[0]!.end !== undefined && more.notes[0]!.end < one.totalChars!
            ? more.notes[0]!.end
            : undefined;
      }
      expect(text.length).toBe(one.totalChars);
    });
  });
});
