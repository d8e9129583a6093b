/**
 * CLI contract of `zot collection list|create|rename|move|delete|add|remove`, run as a
 * subprocess against the test server (needs `npm run build`): exact envelopes and exit codes,
 * `--dry-run` offline, `--idempotency-key` replays and partial retries, confirmation rules.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runZot } from '../../support/cli.js';
import { KEY, startWorld, type World } from '../../core/library/world.js';
import { membership, requests, seedItems, USER } from './fixtures.js';

let world: World;
beforeEach(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await world.close();
});

const zot = (args: string[], env: Record<string, string | undefined> = {}) =>
  runZot(args, { env: world.env(env) });

interface Envelope {
  ok: boolean | 'partial';
  data: Record<string, unknown>;
  error: {
    code: string;
    message: string;
    hint?: string;
    field?: string;
    retryable: boolean;
    failed?: unknown[];
  };
  next?: string[];
  meta: Record<string, unknown>;
}
const META = {
  schema_version: expect.any(String),
  cli_version: expect.any(String),
  request_id: expect.stringMatching(/^[0-9a-f]{12}$/),
  latency_ms: expect.any(Number),
};
const SYNC =
  'SYNC_REMINDER: the change is in the Zotero cloud; the desktop app shows it after its next sync.';

describe('zot collection list', () => {
  beforeEach(() => {
    const lib = world.server.library(USER);
    lib.addCollections([
      { key: 'BBBB2345', name: 'beta' },
      { key: 'AAAA2345', name: 'Alpha' },
    ]);
    lib.addCollections([{ key: 'CCCC2345', name: 'Child of alpha', parentCollection: 'AAAA2345' }]);
  });

  it('prints one envelope: the page, totalResults, start, complete', async () => {
    const r = await zot(['collection', 'list']);
    expect(r.code).toBe(0);
    const env = r.json() as unknown as Envelope;
    expect(env).toEqual({
      ok: true,
      data: {
        collections: [
          { key: 'AAAA2345', name: 'Alpha', parentCollection: false, numItems: 0 },
          { key: 'BBBB2345', name: 'beta', parentCollection: false, numItems: 0 },
          { key: 'CCCC2345', name: 'Child of alpha', parentCollection: 'AAAA2345', numItems: 0 },
        ],
        totalResults: 3,
        start: 0,
        complete: true,
      },
      meta: META,
    });
    expect(Object.keys(env)).toEqual(['ok', 'data', 'meta']);
    expect(r.stderr).not.toContain('SYNC_REMINDER');
  });

  it('--q, --top, --start and --limit', async () => {
    const q = (await zot(['collection', 'list', '--q', 'ALPHA'])).json() as unknown as Envelope;
    expect((q.data.collections as Array<{ key: string }>).map((c) => c.key)).toEqual([
      'AAAA2345',
      'CCCC2345',
    ]);
    const top = (await zot(['collection', 'list', '--top'])).json() as unknown as Envelope;
    expect(top.data.totalResults).toBe(2);
    const page = (
      await zot(['collection', 'list', '--start', '1', '--limit', '1'])
    ).json() as unknown as Envelope;
    expect(page.data).toMatchObject({ collections: [{ key: 'BBBB2345' }], totalResults: 3, start: 1 });
  });

  it('--stream prints one line per row, then a summary; table mode shows the rows and the summary', async () => {
    const lines = (await zot(['collection', 'list', '--stream', '--limit', '2'])).lines();
    expect(lines).toHaveLength(3);
    expect(lines[0]).toEqual({
      ok: true,
      data: { key: 'AAAA2345', name: 'Alpha', parentCollection: false, numItems: 0 },
    });
    expect(lines[2]).toEqual({ ok: true, summary: { count: 2, total: 3, has_more: true }, meta: META });
    const table = await zot(['collection', 'list'], { ZOT_FORMAT: 'table' });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^key\s+name\s+parent\s+items/m);
    expect(table.stdout).toMatch(/^AAAA2345\s+Alpha\s+\(top level\)\s+0$/m);
    expect(table.stdout.trimEnd().split('\n').at(-1)).toBe('Showing 1–3 of 3 collections.');
    expect(table.stdout).toContain('Child of alpha');
    expect(table.stdout + table.stderr).toContain('Showing 1–3 of 3 collections.');
  });

  it('bad input is validation_error (exit 3); --dry-run is refused on a read', async () => {
    const r = await zot(['collection', 'list', '--limit', '0']);
    expect(r.code).toBe(3);
    expect((r.json() as unknown as Envelope).error).toMatchObject({
      code: 'validation_error',
      field: 'limit',
    });
    const g = await zot(['collection', 'list', '--library-type', 'group']);
    expect(g.code).toBe(3);
    expect((g.json() as unknown as Envelope).error).toMatchObject({
      code: 'validation_error',
      field: 'library_id',
    });
    expect((await zot(['collection', 'list', '--dry-run'])).code).toBe(3);
    expect(requests(world)).toHaveLength(0);
  });

  it('works in read-only mode; without a key it is auth_missing (exit 2)', async () => {
    expect((await zot(['collection', 'list'], { ZOTEUS_READ_ONLY: 'true' })).code).toBe(0);
    const r = await zot(['collection', 'list'], { ZOTERO_API_KEY: undefined });
    expect(r.code).toBe(2);
    expect((r.json() as unknown as Envelope).error.code).toBe('auth_missing');
  });

  it('--library-id addresses a group', async () => {
    world.server.library('groups/10').addCollections([{ name: 'Group coll' }]);
    const env = (await zot(['collection', 'list', '--library-id', '10'])).json() as unknown as Envelope;
    expect((env.data.collections as Array<{ name: string }>).map((c) => c.name)).toEqual(['Group coll']);
  });
});

describe('zot collection create / rename / move', () => {
  it('create prints created and libraryVersion, sync_required, next; stderr carries the sync reminder', async () => {
    const [parent] = world.server.library(USER).addCollections([{ name: 'Parent' }]) as [string];
    const r = await zot(['collection', 'create', 'Reading list', '--parent', parent]);
    expect(r.code).toBe(0);
    const env = r.json() as unknown as Envelope;
    const key = (env.data.created as string[])[0] as string;
    expect(env).toEqual({
      ok: true,
      data: {
        created: [key],
        libraryVersion: world.server.library(USER).version,
        sync_required: true,
        written_to: 'cloud',
      },
      next: [`zot collection add ${key} <ITEM_KEY>...`, 'zot collection list --q "Reading list"'],
      meta: META,
    });
    expect(r.stderr).toContain(SYNC);
    expect(world.server.library(USER).collections.get(key)).toMatchObject({
      name: 'Reading list',
      parentCollection: parent,
    });
  });

  it('--dry-run prints the plan offline: no key, no server, nothing written', async () => {
    const r = await zot(['collection', 'create', 'New', '--parent', 'ABCD2345', '--dry-run'], {
      ZOTERO_API_KEY: undefined,
      ZOTERO_API_URL: 'http://127.0.0.1:9',
    });
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({
      ok: true,
      dry_run: true,
      data: {
        would: {
          command: 'collection create',
          library: { type: 'user', id: null, source: 'desktop' },
          args: { action: 'create', name: 'New', parent_collection: 'ABCD2345' },
          action: 'create',
          name: 'New',
          parent_collection: 'ABCD2345',
          effect: 'create collection "New" under ABCD2345',
        },
      },
      meta: META,
    });
    expect(world.server.log).toHaveLength(0);
  });

  it('bad names and keys are validation_error (exit 3) naming the argument; nothing is sent', async () => {
    const empty = await zot(['collection', 'create', '   ']);
    expect(empty.code).toBe(3);
    expect((empty.json() as unknown as Envelope).error).toMatchObject({
      code: 'validation_error',
      field: 'name',
      message: 'NAME: must not be empty or only spaces.',
    });
    const long = await zot(['collection', 'create', 'x'.repeat(256)]);
    expect((long.json() as unknown as Envelope).error.message).toMatch(
      /at most 255 characters after trimming/,
    );
    const key = await zot(['collection', 'rename', 'abc', 'New']);
    expect(key.code).toBe(3);
    expect((key.json() as unknown as Envelope).error).toMatchObject({ field: 'collection_key' });
    const parent = await zot(['collection', 'move', 'ABCD2345', '--parent', 'ABCD1234']);
    expect((parent.json() as unknown as Envelope).error).toMatchObject({ field: 'parent_collection' });
    const missing = await zot(['collection', 'rename', 'ABCD2345']);
    expect((missing.json() as unknown as Envelope).error).toMatchObject({
      code: 'validation_error',
      field: 'name',
    });
    expect(world.server.log).toHaveLength(0);
  });

  it('a missing parent or collection is not_found (exit 4)', async () => {
    const r = await zot(['collection', 'create', 'X', '--parent', 'ZZZZ2345']);
    expect(r.code).toBe(4);
    expect((r.json() as unknown as Envelope).error).toMatchObject({
      code: 'not_found',
      field: 'parent_collection',
    });
    const rename = await zot(['collection', 'rename', 'ZZZZ2345', 'Y']);
    expect(rename.code).toBe(4);
    expect((rename.json() as unknown as Envelope).error.hint).toBe(
      '`zot collection list --q TEXT` finds a collection by name and shows its key.',
    );
    expect(requests(world, 'POST')).toHaveLength(0);
  });

  it('rename and move (under a parent, then to the top level)', async () => {
    const [a, b] = world.server.library(USER).addCollections([{ name: 'A' }, { name: 'B' }]) as [
      string,
      string,
    ];
    const renamed = await zot(['collection', 'rename', b, 'Bee']);
    expect(renamed.code).toBe(0);
    expect(renamed.json()).toEqual({
      ok: true,
      data: {
        collection_key: b,
        libraryVersion: world.server.library(USER).version,
        sync_required: true,
        written_to: 'cloud',
      },
      next: ['zot collection list --q "Bee"'],
      meta: META,
    });
    expect((await zot(['collection', 'move', b, '--parent', a])).code).toBe(0);
    expect(world.server.library(USER).collections.get(b)).toMatchObject({ name: 'Bee', parentCollection: a });
    const cycle = await zot(['collection', 'move', a, '--parent', b]);
    expect(cycle.code).toBe(3);
    expect((cycle.json() as unknown as Envelope).error).toMatchObject({
      code: 'validation_error',
      field: 'parent_collection',
    });
    expect((await zot(['collection', 'move', b])).code).toBe(0);
    expect(world.server.library(USER).collections.get(b)?.parentCollection).toBe(false);
  });

  it('read-only mode refuses writes (permission_denied, exit 2) before any request', async () => {
    const r = await zot(['collection', 'create', 'X'], { ZOTEUS_READ_ONLY: 'true' });
    expect(r.code).toBe(2);
    expect((r.json() as unknown as Envelope).error.code).toBe('permission_denied');
    expect(world.server.log).toHaveLength(0);
  });

  it('--idempotency-key: a repeat replays the same bytes without a request; other arguments are conflict', async () => {
    const first = await zot(['collection', 'create', 'Once', '--idempotency-key', 'create-1']);
    expect(first.code).toBe(0);
    world.server.clearLog();
    const again = await zot(['collection', 'create', 'Once', '--idempotency-key', 'create-1']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    expect(world.server.log).toHaveLength(0);
    expect(
      [...world.server.library(USER).collections.values()].filter((c) => c.name === 'Once'),
    ).toHaveLength(1);
    const other = await zot(['collection', 'create', 'Twice', '--idempotency-key', 'create-1']);
    expect(other.code).toBe(6);
    expect((other.json() as unknown as Envelope).error).toMatchObject({ code: 'conflict', retryable: false });
  });

  it('a group library through --library-id', async () => {
    const r = await zot(['collection', 'create', 'Lab', '--library-id', '10']);
    expect(r.code).toBe(0);
    const key = ((r.json() as unknown as Envelope).data.created as string[])[0] as string;
    expect(world.server.library('groups/10').collections.get(key)?.name).toBe('Lab');
    expect((r.json() as unknown as Envelope).next).toContain(
      `zot collection add ${key} <ITEM_KEY>... --library-id 10`,
    );
  });
});

describe('--dry-run of every writing command', () => {
  it.each([
    [['create', 'New'], 'create collection "New" at the top level'],
    [['rename', 'ABCD2345', 'New name'], 'rename collection ABCD2345 to "New name"'],
    [['move', 'ABCD2345', '--parent', 'WXYZ6789'], 'move collection ABCD2345 under WXYZ6789'],
    [['move', 'ABCD2345'], 'move collection ABCD2345 to the top level'],
    [
      ['delete', 'ABCD2345'],
      'delete collection ABCD2345 and all its subcollections; the items stay in the library',
    ],
    [
      ['add', 'ABCD2345', 'WXYZ6789', 'QRST2345'],
      'add 2 items to collection ABCD2345 (items already in it are skipped)',
    ],
    [
      ['remove', 'ABCD2345', 'WXYZ6789'],
      'remove 1 item from collection ABCD2345 (the items stay in the library)',
    ],
  ])('zot collection %j: offline, without a key, exit 0', async (args, effect) => {
    const r = await zot(['collection', ...args, '--dry-run'], {
      ZOTERO_API_KEY: undefined,
      ZOTERO_API_URL: 'http://127.0.0.1:9',
    });
    expect(r.code).toBe(0);
    const env = r.json() as { ok: boolean; dry_run: boolean; data: { would: Record<string, unknown> } };
    expect(env).toMatchObject({ ok: true, dry_run: true });
    expect(env.data.would).toMatchObject({ command: `collection ${args[0]}`, effect });
    expect(r.stderr).not.toContain('SYNC_REMINDER');
  });

  it('invalid input is still a validation_error under --dry-run', async () => {
    const r = await zot(['collection', 'add', 'ABCD2345', 'nope', '--dry-run'], {
      ZOTERO_API_KEY: undefined,
    });
    expect(r.code).toBe(3);
    expect((r.json() as unknown as Envelope).error).toMatchObject({
      code: 'validation_error',
      field: 'item_keys',
    });
  });
});

describe('zot collection delete', () => {
  let doomed: string;
  beforeEach(() => {
    const lib = world.server.library(USER);
    [doomed] = lib.addCollections([{ name: 'Doomed' }]) as [string];
    lib.addCollections([{ name: 'Sub', parentCollection: doomed }]);
    world.server.clearLog();
  });

  it('without --yes on a non-TTY: confirmation_required (exit 3) after the key check alone', async () => {
    const r = await zot(['collection', 'delete', doomed]);
    expect(r.code).toBe(3);
    expect(r.json()).toEqual({
      ok: false,
      error: {
        code: 'confirmation_required',
        message: '`zot collection delete` is destructive and needs confirmation.',
        retryable: false,
        hint: 'Pass --yes to confirm, or --dry-run to see what it would do.',
      },
      meta: META,
    });
    // The order of checks: the key is checked before anyone is asked, and nothing else is sent.
    expect(world.server.log.map((e) => e.path)).toEqual(['/keys/current']);
    expect(world.server.library(USER).collections.size).toBe(2);
  });

  it('--dry-run prints the planned deletion, offline', async () => {
    const r = await zot(['collection', 'delete', doomed, '--dry-run'], {
      ZOTERO_API_KEY: undefined,
      ZOTERO_API_URL: 'http://127.0.0.1:9',
    });
    expect(r.code).toBe(0);
    expect((r.json() as { data: { would: unknown } }).data.would).toEqual({
      command: 'collection delete',
      library: { type: 'user', id: null, source: 'desktop' },
      args: { action: 'delete', collection_key: doomed },
      action: 'delete',
      collection_key: doomed,
      effect: `delete collection ${doomed} and all its subcollections; the items stay in the library`,
    });
    expect(world.server.log).toHaveLength(0);
  });

  it('--yes deletes the subtree and names what went; --idempotency-key replays it', async () => {
    const r = await zot(['collection', 'delete', doomed, '--yes', '--idempotency-key', 'del-1']);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({
      ok: true,
      data: {
        deleted: doomed,
        deletedName: 'Doomed',
        subcollectionsDeleted: 1,
        libraryVersion: world.server.library(USER).version,
        sync_required: true,
        written_to: 'cloud',
      },
      next: ['zot collection list'],
      meta: META,
    });
    expect(world.server.library(USER).collections.size).toBe(0);
    world.server.clearLog();
    const again = await zot(['collection', 'delete', doomed, '--yes', '--idempotency-key', 'del-1']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(r.stdout);
    expect(world.server.log).toHaveLength(0);
    // Without the key, the same delete is not_found: it is gone.
    const gone = await zot(['collection', 'delete', doomed, '--yes']);
    expect(gone.code).toBe(4);
  });
});

describe('zot collection add / remove', () => {
  let coll: string;
  let items: string[];
  beforeEach(() => {
    [coll] = world.server.library(USER).addCollections([{ name: 'T' }]) as [string];
    items = seedItems(world, 3);
    world.server.clearLog();
  });

  it('add: updated, unchanged, failed, libraryVersion; progress on stderr', async () => {
    const r = await zot(['collection', 'add', coll, ...items]);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({
      ok: true,
      data: {
        updated: items,
        unchanged: [],
        failed: [],
        libraryVersion: world.server.library(USER).version,
        sync_required: true,
        written_to: 'cloud',
      },
      meta: META,
    });
    const events = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { event: string; phase: string });
    expect(events[0]).toMatchObject({ event: 'start', phase: 'add_items', total: 3 });
    expect(events.at(-1)).toMatchObject({ event: 'complete', succeeded: 3, failed: 0 });
    expect(membership(world, items).every((c) => c[0] === coll)).toBe(true);
    const again = await zot(['collection', 'add', coll, ...items]);
    expect((again.json() as unknown as Envelope).data).toMatchObject({ updated: [], unchanged: items });
  });

  it('a missing item: ok "partial", exit 7; the same --idempotency-key retries only it and merges', async () => {
    const missing = 'MISS2345';
    const args = [
      'collection',
      'add',
      coll,
      items[0] as string,
      missing,
      items[1] as string,
      '--idempotency-key',
      'add-1',
    ];
    const first = await zot(args);
    expect(first.code).toBe(7);
    expect(first.json()).toEqual({
      ok: 'partial',
      data: {
        updated: [items[0], items[1]],
        unchanged: [],
        failed: [
          {
            index: 1,
            key: missing,
            code: 404,
            message: `Item ${missing} does not exist in library users/1.`,
            reason: 'not_found',
            retryable: false,
          },
        ],
        libraryVersion: world.server.library(USER).version,
        sync_required: true,
        written_to: 'cloud',
      },
      meta: { ...META, total: 3, sync_required: true },
    });

    world.server.library(USER).addItems([{ key: missing, title: 'Late' }]);
    world.server.clearLog();
    const second = await zot(args);
    expect(second.code).toBe(0);
    const env = second.json() as unknown as Envelope;
    expect(env.ok).toBe(true);
    expect(env.data).toMatchObject({ updated: [items[0], items[1], missing], unchanged: [], failed: [] });
    // Only the failed item was read and written again.
    expect(requests(world).map((e) => `${e.method} ${String(e.query.itemKey ?? '')}`)).toEqual([
      `GET ${missing}`,
      'POST ',
    ]);
    expect(membership(world, [missing])[0]).toEqual([coll]);
  });

  it('every item missing: ok false with the shared code and the entries in error.failed', async () => {
    const r = await zot(['collection', 'add', coll, 'MISS2345', 'ZZZZ2345']);
    expect(r.code).toBe(4);
    const error = (r.json() as unknown as Envelope).error;
    expect(error.code).toBe('not_found');
    expect(error.failed).toHaveLength(2);
  });

  it('a collection that does not exist is not_found (exit 4)', async () => {
    const r = await zot(['collection', 'add', 'ZZZZ2345', ...items]);
    expect(r.code).toBe(4);
    expect((r.json() as unknown as Envelope).error).toMatchObject({
      code: 'not_found',
      message: 'Collection ZZZZ2345 does not exist in library users/1; no item was changed.',
    });
  });

  it('remove is destructive: --yes; above ZOTEUS_CONFIRM_BULK_WRITES it also needs --confirm', async () => {
    await zot(['collection', 'add', coll, ...items]);
    world.server.clearLog();
    const noYes = await zot(['collection', 'remove', coll, ...items]);
    expect(noYes.code).toBe(3);
    expect((noYes.json() as unknown as Envelope).error.code).toBe('confirmation_required');

    const bulk = await zot(['collection', 'remove', coll, ...items, '--yes'], {
      ZOTEUS_CONFIRM_BULK_WRITES: '2',
    });
    expect(bulk.code).toBe(3);
    expect((bulk.json() as unknown as Envelope).error).toEqual({
      code: 'confirmation_required',
      message: `Removing 3 items from collection ${coll} in one call needs confirmation: the bulk-write threshold (ZOTEUS_CONFIRM_BULK_WRITES) is 2 items. Nothing was changed.`,
      retryable: false,
      hint: 'Call again with --confirm to proceed, or remove at most 2 items per call.',
      field: 'confirm',
    });
    expect(world.server.log).toHaveLength(0);

    const plan = await zot(['collection', 'remove', coll, ...items, '--dry-run'], {
      ZOTEUS_CONFIRM_BULK_WRITES: '2',
    });
    expect((plan.json() as { data: { would: Record<string, unknown> } }).data.would).toMatchObject({
      itemCount: 3,
      bulkThreshold: 2,
      needsConfirm: true,
    });

    const ok = await zot(['collection', 'remove', coll, ...items, '--yes', '--confirm'], {
      ZOTEUS_CONFIRM_BULK_WRITES: '2',
    });
    expect(ok.code).toBe(0);
    expect((ok.json() as unknown as Envelope).data).toMatchObject({
      updated: items,
      unchanged: [],
      failed: [],
    });
    expect(membership(world, items).every((c) => c.length === 0)).toBe(true);
    expect(ok.stdout + ok.stderr).not.toContain(KEY);
  });
});
