/**
 * The two declarations without a server: input validation (keys, names, per-action fields,
 * bounds, addressing) as both surfaces see it, plan(), summaries, `next` suggestions parsed
 * against the command tree, and retryFailed.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config.js';
import { renderErrorRefs } from '../../../src/core/call/refs.js';
import { isZoteusError } from '../../../src/core/errors.js';
import { resolveLibrary } from '../../../src/core/library/address.js';
import type { AnyTool } from '../../../src/core/tool.js';
import { checkSuggestion } from '../../../src/surfaces/cli/suggestions.js';
import { buildTree } from '../../../src/surfaces/cli/tree.js';
import { validateInput } from '../../../src/surfaces/cli/validate.js';
import { mcpRefRenderer } from '../../../src/surfaces/mcp/refs.js';
import { describeTool } from '../../../src/surfaces/mcp/schemas.js';
import { parseArguments } from '../../../src/surfaces/mcp/validate.js';
import listTool from '../../../src/tools/collections/list-collections.js';
import manageTool from '../../../src/tools/collections/manage-collections.js';
import { tools } from '../../../src/tools/index.js';

const manage = manageTool;
const list = listTool;
const root = buildTree(tools);

function refusal(tool: AnyTool, args: Record<string, unknown>): { field?: string; message: string } {
  try {
    parseArguments(tool, args);
  } catch (error) {
    if (isZoteusError(error) && error.code === 'validation_error') {
      // As the MCP surface shows it (its references rendered).
      const shown = renderErrorRefs(error, mcpRefRenderer);
      return { message: shown.message, ...(shown.field ? { field: shown.field } : {}) };
    }
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(args)} to be refused`);
}

describe('input validation (MCP and CLI alike)', () => {
  it('accepts each action with what it needs', () => {
    const ok = [
      { action: 'list' },
      { action: 'list', q: 'x', limit: 1000, start: 0 },
      { action: 'create', name: 'New' },
      { action: 'create', name: 'New', parent_collection: 'ABCD2345' },
      { action: 'rename', collection_key: 'ABCD2345', name: 'x' },
      { action: 'reparent', collection_key: 'ABCD2345' },
      { action: 'reparent', collection_key: 'ABCD2345', parent_collection: 'WXYZ6789' },
      { action: 'delete', collection_key: 'ABCD2345' },
      { action: 'add_items', collection_key: 'ABCD2345', item_keys: ['WXYZ6789'] },
      { action: 'remove_items', collection_key: 'ABCD2345', item_keys: ['WXYZ6789'], confirm: true },
      { action: 'create', name: `  ${'x'.repeat(255)}  `, library_id: 10, library_type: 'group' },
    ];
    for (const args of ok) expect(() => parseArguments(manage, args)).not.toThrow();
  });

  it.each([
    [
      { action: 'create' },
      'name',
      /name: the name of the new collection is required for action "create" \(1 to 255 characters\), e\.g\. zotero_manage_collections \(action: create, name: "Reading list"\)/,
    ],
    [
      { action: 'rename', name: 'x' },
      'collection_key',
      /collection_key: the key of the collection to rename is required for action "rename"/,
    ],
    [
      { action: 'rename', collection_key: 'ABCD2345' },
      'name',
      /name: the new name of the collection is required for action "rename" \(1 to 255 characters\), e\.g\. zotero_manage_collections \(action: rename, collection_key: ABCD2345, name: "Reading list"\)/,
    ],
    [
      { action: 'delete' },
      'collection_key',
      /collection_key: the key of the collection to delete is required for action "delete"/,
    ],
    [
      { action: 'add_items', collection_key: 'ABCD2345' },
      'item_keys',
      /item_keys: the keys of the items to add are required for action "add_items"/,
    ],
    [
      { action: 'remove_items', collection_key: 'ABCD2345', item_keys: [] },
      'item_keys',
      /item_keys: needs at least one item key for action "remove_items"/,
    ],
    [{ action: 'create', name: '' }, 'name', /name: must not be empty/],
    [{ action: 'create', name: '   ' }, 'name', /name: must not be empty/],
    [
      { action: 'rename', collection_key: 'ABCD2345', name: 'x'.repeat(256) },
      'name',
      /at most 255 characters after trimming; got 256/,
    ],
    [
      { action: 'delete', collection_key: 'ABC' },
      'collection_key',
      /collection_key must be an 8-character Zotero collection key \(digits 2-9 and capital letters except O\), e\.g\. ABCD2345 \(got 'ABC'\)/,
    ],
    [{ action: 'delete', collection_key: 'abcd2345' }, 'collection_key', /Zotero collection key/],
    [{ action: 'delete', collection_key: 'ABCD1234' }, 'collection_key', /Zotero collection key/],
    [{ action: 'delete', collection_key: 'ABCDO234' }, 'collection_key', /Zotero collection key/],
    [
      { action: 'create', name: 'x', parent_collection: 'nope' },
      'parent_collection',
      /parent_collection must be an 8-character Zotero key/,
    ],
    [
      { action: 'add_items', collection_key: 'ABCD2345', item_keys: ['WXYZ6789', 'bad'] },
      'item_keys[1]',
      /item_keys\[1\] must be an 8-character Zotero item key/,
    ],
    [
      { action: 'rename', collection_key: 'ABCD2345', name: 'x', parent_collection: 'WXYZ6789' },
      'parent_collection',
      /does not apply to action "rename" \(to move a collection, use action "reparent"\)/,
    ],
    [
      { action: 'reparent', collection_key: 'ABCD2345', name: 'x' },
      'name',
      /does not apply to action "reparent"/,
    ],
    [
      { action: 'delete', collection_key: 'ABCD2345', item_keys: ['WXYZ6789'] },
      'item_keys',
      /does not apply/,
    ],
    [{ action: 'create', name: 'x', collection_key: 'ABCD2345' }, 'collection_key', /does not apply/],
    [{ action: 'list', limit: 0 }, 'limit', /./],
    [{ action: 'list', limit: 1001 }, 'limit', /./],
    [{ action: 'list', limit: 2.5 }, 'limit', /./],
    [{ action: 'list', start: -1 }, 'start', /./],
    [{ action: 'frobnicate' }, 'action', /./],
    [{}, 'action', /./],
    [{ action: 'list', library_id: 0 }, 'library_id', /./],
    [{ action: 'list', library_id: -3 }, 'library_id', /./],
    [{ action: 'list', library_type: 'team' }, 'library_type', /./],
    [{ action: 'list', unknown: 1 }, 'unknown', /Unknown argument 'unknown'/],
  ])('refuses %j on %s', (args, field, message) => {
    const r = refusal(manage, args);
    expect(r.field).toBe(field);
    expect(r.message).toMatch(message);
  });

  it('list tool: bounds, unknown fields, keys of the listing only', () => {
    expect(() =>
      parseArguments(list, { q: 'x', top: true, limit: 1, start: 5, library_id: 10 }),
    ).not.toThrow();
    expect(refusal(list, { limit: 1001 }).field).toBe('limit');
    expect(refusal(list, { start: -1 }).field).toBe('start');
    expect(refusal(list, { action: 'list' }).field).toBe('action');
    expect(refusal(list, { top: 'yes' }).field).toBe('top');
  });

  it('library addressing: "group" without an id is refused before credentials', () => {
    const config = loadConfig({ HOME: '/nonexistent', ZOT_CONFIG_DIR: '/nonexistent' });
    const input = parseArguments(manage, { action: 'list', library_type: 'group' });
    expect(() => resolveLibrary(input, config)).toThrow(/library_type "group" needs library_id/);
    expect(resolveLibrary(parseArguments(manage, { action: 'list', library_id: 10 }), config)).toMatchObject({
      type: 'group',
      id: 10,
    });
  });

  it('the CLI names positionals and renamed flags in its messages', () => {
    const command = (path: string) => {
      const node = root.children.get('collection')?.children.get(path);
      if (node?.target?.kind !== 'tool') throw new Error(path);
      return node.target.command;
    };
    expect(() =>
      validateInput(manage, command('rename'), { action: 'rename', collection_key: 'nope', name: 'x' }),
    ).toThrow(/COLLECTION_KEY must be an 8-character Zotero collection key/);
    expect(() =>
      validateInput(manage, command('create'), { action: 'create', name: 'x', parent_collection: 'bad' }),
    ).toThrow(/--parent must be an 8-character Zotero key/);
    expect(() => validateInput(manage, command('create'), { action: 'create', name: ' ' })).toThrow(
      /NAME: must not be empty or only spaces/,
    );
  });
});

describe('declarations', () => {
  it('tiers and annotations: the list tool reads; manage is destructive, its commands write or destroy', () => {
    // The specification's defaults (open world; not idempotent) are left out.
    expect(describeTool(list).annotations).toEqual({ readOnlyHint: true });
    expect(describeTool(manage).annotations).toEqual({ readOnlyHint: false, destructiveHint: true });
    const tiers = Object.fromEntries(
      [...(root.children.get('collection')?.children ?? new Map())].map(([name, node]) => [name, node.tier]),
    );
    expect(tiers).toEqual({
      list: 'read',
      create: 'write',
      rename: 'write',
      move: 'write',
      delete: 'destructive',
      add: 'write',
      remove: 'destructive',
    });
  });

  it('descriptions name the sibling to prefer, the real cap and the bulk threshold', () => {
    expect(manage.description).toMatch(/To list or find one, prefer zotero_list_collections \(read-only\)/);
    expect(list.description).toMatch(
      /The read-only way to find a collection and its key \(zotero_manage_collections changes them\)/,
    );
    for (const tool of [manage, list]) {
      // The cap is told once, by the seed's own text of `complete` in the published entry.
      expect(JSON.stringify(describeTool(tool))).toMatch(/ZOTEUS_MAX_COLLECTIONS, 100,000 by default/);
      expect(JSON.stringify(describeTool(tool))).not.toMatch(/10,000\)/);
    }
    expect(manage.description).toMatch(/ZOTEUS_CONFIRM_BULK_WRITES/);
    expect(manage.description).toMatch(/items stay in the library/);
  });

  it('plan() is offline: what each command would do', () => {
    const deps = { config: loadConfig({ HOME: '/nonexistent', ZOTEUS_CONFIRM_BULK_WRITES: '1' }), env: {} };
    expect(manageTool.plan?.({ action: 'create', name: ' New ' }, deps)).toEqual({
      action: 'create',
      name: 'New',
      parent_collection: null,
      effect: 'create collection "New" at the top level',
    });
    expect(manageTool.plan?.({ action: 'delete', collection_key: 'ABCD2345' }, deps)).toEqual({
      action: 'delete',
      collection_key: 'ABCD2345',
      effect: 'delete collection ABCD2345 and all its subcollections; the items stay in the library',
    });
    expect(
      manageTool.plan?.(
        {
          action: 'remove_items',
          collection_key: 'ABCD2345',
          item_keys: ['WXYZ6789', 'WXYZ6789', 'QRST2345'],
        },
        deps,
      ),
    ).toEqual({
      action: 'remove_items',
      collection_key: 'ABCD2345',
      item_keys: ['WXYZ6789', 'QRST2345'],
      itemCount: 2,
      bulkThreshold: 1,
      needsConfirm: true,
      effect: 'remove 2 items from collection ABCD2345 (the items stay in the library)',
    });
  });

  it('next suggestions parse against the command tree, carry the library, and retry only retryable failures', () => {
    const created = manageTool.next?.(
      { created: ['ABCD2345'], libraryVersion: 3 },
      { action: 'create', name: 'Reading "list"', library_id: 10 },
    );
    expect(created).toEqual([
      'zot collection add ABCD2345 <ITEM_KEY>... --library-id 10',
      `zot collection list --q 'Reading "list"' --library-id 10`,
    ]);
    const retry = manageTool.next?.(
      {
        updated: ['AAAA2345'],
        failed: [
          { index: 1, key: 'BBBB2345', code: 412, message: 'x', reason: 'conflict', retryable: true },
          { index: 2, key: 'CCCC2345', code: 404, message: 'x', reason: 'not_found', retryable: false },
        ],
      },
      {
        action: 'remove_items',
        collection_key: 'ABCD2345',
        item_keys: ['AAAA2345', 'BBBB2345', 'CCCC2345'],
        confirm: true,
      },
    );
    expect(retry).toEqual(['zot collection remove ABCD2345 BBBB2345 --yes --confirm']);
    const all = [
      ...(created ?? []),
      ...(retry ?? []),
      ...(manageTool.next?.(
        { collection_key: 'ABCD2345' },
        { action: 'rename', collection_key: 'ABCD2345', name: 'x' },
      ) ?? []),
      ...(manageTool.next?.({ deleted: 'ABCD2345' }, { action: 'delete', collection_key: 'ABCD2345' }) ?? []),
      ...(manageTool.next?.(
        { collection_key: 'ABCD2345' },
        { action: 'reparent', collection_key: 'ABCD2345' },
      ) ?? []),
    ];
    expect(all.length).toBeGreaterThanOrEqual(6);
    for (const suggestion of all) expect(checkSuggestion(root, suggestion), suggestion).toBe(true);
  });

  it('summaries say what changed in one line', () => {
    const s = (out: Record<string, unknown>, input: Record<string, unknown>) =>
      manageTool.summarize?.(out as never, input as never);
    expect(
      s({ created: ['ABCD2345'] }, { action: 'create', name: 'New', parent_collection: 'WXYZ6789' }),
    ).toBe('Created collection "New" (ABCD2345) under WXYZ6789.');
    expect(
      s({ collection_key: 'ABCD2345' }, { action: 'rename', collection_key: 'ABCD2345', name: 'B' }),
    ).toBe('Renamed collection ABCD2345 to "B".');
    expect(s({ collection_key: 'ABCD2345' }, { action: 'reparent', collection_key: 'ABCD2345' })).toBe(
      'Moved collection ABCD2345 to the top level.',
    );
    expect(
      s(
        { deleted: 'ABCD2345', deletedName: 'Old', subcollectionsDeleted: 2 },
        { action: 'delete', collection_key: 'ABCD2345' },
      ),
    ).toBe('Deleted collection "Old" (ABCD2345) and its 2 subcollections; its items stay in the library.');
    expect(
      s(
        {
          updated: ['A'],
          unchanged: ['B', 'C'],
          failed: [{ index: 3, key: 'D', code: 404, message: '', reason: 'not_found', retryable: false }],
        },
        { action: 'remove_items', collection_key: 'ABCD2345', item_keys: ['A', 'B', 'C', 'D'] },
      ),
    ).toBe('Removed 1 item from collection ABCD2345; 2 items not in it; 1 failed (see failed).');
    expect(s({ collections: [], totalResults: 0, start: 0, complete: true }, { action: 'list' })).toBe(
      'The library has no collections.',
    );
  });

  it('retryFailed retries only the failed item keys and merges, keeping original positions', () => {
    const retry = manageTool.retryFailed;
    if (!retry) throw new Error('retryFailed missing');
    const input = {
      action: 'add_items' as const,
      collection_key: 'ABCD2345',
      item_keys: ['AAAA2345', 'BBBB2345', 'CCCC2345', 'DDDD2345'],
    };
    const first = {
      updated: ['AAAA2345'],
      unchanged: ['DDDD2345'],
      failed: [
        { index: 1, key: 'BBBB2345', code: 412, message: 'm', reason: 'conflict', retryable: true },
        { index: 2, key: 'CCCC2345', code: 404, message: 'm', reason: 'not_found', retryable: false },
      ],
      libraryVersion: 5,
    };
    expect(retry.input(input, first)).toEqual({ ...input, item_keys: ['BBBB2345', 'CCCC2345'] });
    const second = {
      updated: ['BBBB2345'],
      unchanged: [],
      failed: [{ index: 1, key: 'CCCC2345', code: 404, message: 'm', reason: 'not_found', retryable: false }],
      libraryVersion: 7,
    };
    expect(retry.merge(first, second)).toEqual({
      updated: ['AAAA2345', 'BBBB2345'],
      unchanged: ['DDDD2345'],
      failed: [{ index: 2, key: 'CCCC2345', code: 404, message: 'm', reason: 'not_found', retryable: false }],
      libraryVersion: 7,
    });
    expect(retry.input(input, { ...first, failed: [] })).toBeNull();
    expect(retry.input({ action: 'create', name: 'x' }, { created: ['ABCD2345'] })).toBeNull();
  });
});
