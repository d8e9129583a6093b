/**
 * Issue 16, point 13 (agent-interface.md, "Error codes"): every read that looks an item up by
 * key answers a key that names nothing with `not_found` (exit 4), also when the string could
 * never be a key, and then says so; every command that writes refuses a malformed key with
 * `validation_error` (exit 3) before sending anything. Both loops run over the one tool list,
 * so a tool added later is held to the rule too. On the sample zotero.sqlite (user 8675309)
 * and the Web API test server that mirrors it.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changesLibrary, type AnyTool } from '../../src/core/tool.js';
import { tools } from '../../src/tools/index.js';
import { runZot } from '../support/cli.js';
import { connect } from '../surfaces/mcp/harness.js';
import { KEY, SAMPLE_KEYS, startDesktopWorld, type DesktopWorld } from '../core/library/router-world.js';

const I = SAMPLE_KEYS.user.items;
const LIB = `users/${SAMPLE_KEYS.user.userID}`;
const FORM = '8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ';
/** The inputs through which a read looks items up by key. */
const LOOKUP_FIELDS = ['item_key', 'item_keys', 'note_key', 'parent_item'];
/** Inputs that name an object by key (what a write acts on, or puts something under). */
const KEY_FIELD = /(^|_)(key|keys|item|collection)$/;

let world: DesktopWorld;
beforeAll(async () => {
  world = await startDesktopWorld();
});
afterAll(async () => {
  await world.close();
});

type Mcp = Awaited<ReturnType<typeof connect>>;
const call = async (mcp: Mcp, name: string, args: Record<string, unknown>) =>
  (await mcp.client.callTool({ name, arguments: args })) as CallToolResult;
const errorOf = (r: CallToolResult) =>
  r._meta?.['zoteus/error'] as { code: string; message: string; field?: string; hint?: string } | undefined;

const fieldsOf = (tool: AnyTool) => Object.keys(tool.input.shape);
/** Whether the input takes a list of keys (item_keys) rather than one. */
const isArrayField = (tool: AnyTool, field: string) =>
  tool.input.shape[field]?.safeParse(['ZZZZ2345']).success === true;

/** Read tools and the key inputs they look items up by. */
const lookups = tools
  // Reads, and tools that only write local files (an export looks its items up as a read does).
  .filter((t) => !changesLibrary(t, t.tier))
  .flatMap((t) =>
    fieldsOf(t)
      .filter((f) => LOOKUP_FIELDS.includes(f))
      .map((field) => ({ tool: t, field })),
  );

/** The input of a lookup of `key` through `field`: a note is looked up under an item that exists. */
function lookupInput(tool: AnyTool, field: string, key: string): Record<string, unknown> {
  const value = isArrayField(tool, field) ? [key] : key;
  return field === 'note_key' ? { item_key: I.seaLevelArticle, note_key: value } : { [field]: value };
}

describe('reads: a key that names nothing is not_found', () => {
  let mcp: Mcp;
  beforeAll(async () => {
    mcp = await connect(tools, world.env());
  });
  afterAll(async () => {
    await mcp.close();
  });

  it('the sweep covers the item lookups of read, summarize, pdf and note (and any added later)', () => {
    expect(lookups.map((l) => `${l.tool.name}.${l.field}`)).toEqual(
      expect.arrayContaining([
        'zotero_get_item.item_key',
        'zotero_summarize.item_keys',
        'zotero_get_fulltext.item_key',
        'zotero_list_notes.item_key',
        'zotero_list_notes.note_key',
      ]),
    );
  });

  it.each(lookups.map((l) => [`${l.tool.name} ${l.field}`, l] as const))(
    '%s: a string that is no key, and a well-formed key of nothing, are not_found',
    async (_name, { tool, field }) => {
      const nope = errorOf(await call(mcp, tool.name, lookupInput(tool, field, 'NOPE')));
      expect(nope).toMatchObject({ code: 'not_found', field });
      expect(nope?.message).toContain(`"NOPE" is not a Zotero key (${FORM}).`);
      const none = errorOf(await call(mcp, tool.name, lookupInput(tool, field, 'ZZZZ2345')));
      expect(none).toMatchObject({ code: 'not_found', field });
      expect(none?.message).not.toContain('is not a Zotero key');
      if (field !== 'note_key') {
        // The item lookups name the library the call addressed, in one wording.
        expect(nope?.message).toBe(`No item "NOPE" in ${LIB}: "NOPE" is not a Zotero key (${FORM}).`);
        expect(none?.message).toBe(`No item "ZZZZ2345" in ${LIB}.`);
      } else {
        expect(nope?.message).toBe(
          `Item "${I.seaLevelArticle}" has no child note "NOPE": "NOPE" is not a Zotero key (${FORM}).`,
        );
      }
    },
  );

  it('several keys: each that names nothing is named, the malformed ones first and said to be so', async () => {
    const bad = errorOf(
      await call(mcp, 'zotero_summarize', { item_keys: [I.seaLevelArticle, 'NOPE', 'x y'] }),
    );
    expect(bad).toMatchObject({
      code: 'not_found',
      field: 'item_keys',
      message: `No items "NOPE", "x y" in ${LIB}: "NOPE", "x y" are not Zotero keys (${FORM}).`,
    });
    const missing = errorOf(
      await call(mcp, 'zotero_summarize', { item_keys: [I.seaLevelArticle, 'ZZZZ2345', 'YYYY2345'] }),
    );
    expect(missing).toMatchObject({
      code: 'not_found',
      message: `No items "ZZZZ2345", "YYYY2345" in ${LIB}.`,
    });
  });

  it('the CLI exits 4 on every read command, `zot note NOPE` included (needs `npm run build`)', async () => {
    for (const args of [
      ['read', 'NOPE'],
      ['summarize', 'NOPE'],
      ['pdf', 'NOPE'],
      ['note', 'NOPE'],
      ['note', I.seaLevelArticle, '--note-key', 'NOPE'],
      ['note', 'ZZZZ2345'],
    ]) {
      const r = await runZot(args, { env: world.env() });
      expect({ args, code: r.code }).toEqual({ args, code: 4 });
      expect((r.json().error as { code: string }).code).toBe('not_found');
    }
    const r = await runZot(['note', 'NOPE'], { env: world.env() });
    expect(r.json().error).toMatchObject({
      message: `No item "NOPE" in ${LIB}: "NOPE" is not a Zotero key (${FORM}).`,
      hint: `\`zot search TEXT\` finds valid item keys (${FORM}).`,
    });
  });
});

/** What each mutating tool needs besides the key under test, so that only the key is wrong. */
const WRITE_BASE: Record<string, (field: string) => Record<string, unknown>> = {
  zotero_manage_collections: (field) =>
    field === 'collection_key'
      ? { action: 'rename', name: 'x' }
      : field === 'parent_collection'
        ? { action: 'create', name: 'x' }
        : { action: 'add_items', collection_key: SAMPLE_KEYS.user.collections.climate },
  zotero_update_item: () => ({ title: 'x' }),
  zotero_create_note: () => ({ text: 'x' }),
  zotero_create_annotation: () => ({ quote: 'x' }),
  zotero_trash_items: () => ({}),
  zotero_delete_items: () => ({ confirm: true }),
  zotero_manage_tags: () => ({ action: 'add_items', tag: 'x' }),
  zotero_import: () => ({ doi: '10.1000/xyz' }),
  zotero_attach_file: () => ({ content_base64: 'aGk=', filename: 'x.txt' }),
  zotero_update_status: () => ({ apply: true }),
  zotero_enrich: () => ({ apply: true }),
  zotero_manage_saved_searches: () => ({ action: 'delete' }),
  zotero_merge_items: (field) =>
    field === 'master_key'
      ? { apply: true, item_keys: ['BCDE2345'] }
      : { apply: true, master_key: 'BCDE2345' },
};

const writes = tools
  .filter((t) => changesLibrary(t, t.tier))
  .flatMap((t) =>
    fieldsOf(t)
      .filter((f) => KEY_FIELD.test(f) && f !== 'idempotency_key')
      .map((field) => ({ tool: t, field })),
  );

describe('writes: a malformed key is a validation_error before anything is sent', () => {
  let mcp: Mcp;
  beforeAll(async () => {
    mcp = await connect(tools, world.env({ ZOTERO_API_KEY: KEY, ZOTEUS_ALLOW_DELETE: 'true' }));
  });
  afterAll(async () => {
    await mcp.close();
  });

  it('the sweep finds the key inputs of the writes', () => {
    expect(writes.map((w) => `${w.tool.name}.${w.field}`)).toEqual(
      expect.arrayContaining([
        'zotero_update_item.item_key',
        'zotero_create_note.parent_item',
        'zotero_trash_items.item_keys',
        'zotero_manage_collections.collection_key',
      ]),
    );
  });

  it.each(writes.map((w) => [`${w.tool.name} ${w.field}`, w] as const))(
    '%s: "NOPE" is refused with validation_error, offline',
    async (_name, { tool, field }) => {
      const base = WRITE_BASE[tool.name];
      expect(base, `WRITE_BASE needs an entry for ${tool.name}`).toBeDefined();
      const before = world.server.log.length;
      const r = await call(mcp, tool.name, {
        ...base!(field),
        [field]: isArrayField(tool, field) ? ['NOPE'] : 'NOPE',
      });
      // A list's field names the entry: item_keys[0].
      expect(errorOf(r)).toMatchObject({
        code: 'validation_error',
        field: expect.stringMatching(new RegExp(`^${field}(\\[0\\])?$`)),
      });
      expect(world.server.log.slice(before)).toEqual([]);
    },
  );

  it('the CLI exits 3 for a write with a malformed key (needs `npm run build`)', async () => {
    const before = world.server.log.length;
    const r = await runZot(['note', 'add', 'NOPE', 'hello'], { env: world.env({ ZOTERO_API_KEY: KEY }) });
    expect(r.code).toBe(3);
    expect(r.json().error).toMatchObject({ code: 'validation_error', field: 'parent_item' });
    expect(world.server.log.slice(before)).toEqual([]);
  });
});
