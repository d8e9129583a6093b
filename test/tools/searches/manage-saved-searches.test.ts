/**
 * `zotero_manage_saved_searches` / `zot saved-search create|delete` against the Web API test
 * server: what is sent (request counts, the stored definition), conditions checked against
 * Zotero's names before anything is sent (with did-you-mean), a retry with the same idempotency
 * key that creates nothing twice, and delete as a destructive command.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyTool } from '../../../src/core/tool.js';
import { tools } from '../../../src/tools/index.js';
import { KEY, startWorld, type World } from '../../core/library/world.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';

const USER = 'users/1';
let world: World;
let mcp: Awaited<ReturnType<typeof connect>> | undefined;

beforeEach(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await mcp?.close();
  mcp = undefined;
  await world.close();
});

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  mcp ??= await connect(tools as readonly AnyTool[], {
    ZOTERO_API_URL: world.server.url,
    ZOTERO_API_KEY: KEY,
  });
  return (await mcp.client.callTool({ name, arguments: args })) as CallToolResult;
}

/** Requests other than the key check, as `METHOD path`. */
const sent = () =>
  world.server.log.filter((e) => e.path !== '/keys/current').map((e) => `${e.method} ${e.path}`);
const searches = () => [...world.server.library(USER).searches.values()];
const errorOf = (r: CallToolResult) =>
  (r._meta as Record<string, { code: string; message: string; hint?: string }>)['zoteus/error']!;

describe('create', () => {
  it('stores the conditions as Zotero names them, in one POST with a client key', async () => {
    const r = await call('zotero_manage_saved_searches', {
      action: 'create',
      name: '  Recent ocean papers ',
      conditions: [
        'title contains ocean',
        'tag is sea level',
        'dateAdded isInTheLast 30 days',
        'noChildren true',
      ],
    });
    expect(r.isError).toBeFalsy();
    const [stored] = searches();
    expect(stored).toMatchObject({
      name: 'Recent ocean papers',
      conditions: [
        { condition: 'title', operator: 'contains', value: 'ocean' },
        { condition: 'tag', operator: 'is', value: 'sea level' },
        { condition: 'dateAdded', operator: 'isInTheLast', value: '30 days' },
        { condition: 'noChildren', operator: 'true', value: '' },
      ],
    });
    expect(r.structuredContent).toMatchObject({ created: [stored!.key], name: 'Recent ocean papers' });
    expect((r.content[0] as { text: string }).text).toBe(
      `Created saved search "Recent ocean papers" (${stored!.key}) with 4 conditions.`,
    );
    expect(sent()).toEqual([`POST /${USER}/searches`]);
    const post = world.server.log.find((e) => e.method === 'POST')!;
    expect(post.headers['zotero-write-token']).toMatch(/^[0-9a-f]{32}$/);
  });

  it('an unknown condition or an operator it does not take is refused offline, with the closest names', async () => {
    const cases: Array<[string, string]> = [
      [
        'titel contains ocean',
        "conditions[0]: 'titel' is not a Zotero search condition (did you mean 'title'?).",
      ],
      [
        'tag beginsWith sea',
        "conditions[0]: operator 'beginsWith' does not apply to condition 'tag'; 'tag' takes 'is', 'isNot', 'contains', 'doesNotContain'.",
      ],
      [
        'title contians ocean',
        "conditions[0]: operator 'contians' is not a Zotero search operator (did you mean 'contains'?); 'title' takes 'is', 'isNot', 'contains', 'doesNotContain', 'beginsWith'.",
      ],
      [
        'itemType is jounralArticle',
        "conditions[0]: 'jounralArticle' is not a Zotero item type (did you mean 'journalArticle'?).",
      ],
      [
        'deleted',
        'conditions[0]: "deleted" is not "condition operator value" (e.g. "tag is sea level", "title contains ocean", "deleted false").',
      ],
    ];
    for (const [condition, message] of cases) {
      const r = await call('zotero_manage_saved_searches', {
        action: 'create',
        name: 'X',
        conditions: [condition],
      });
      expect(r.isError).toBe(true);
      expect(errorOf(r)).toMatchObject({ code: 'validation_error', message });
    }
    // A valid first condition does not hide a bad second one.
    const second = await call('zotero_manage_saved_searches', {
      action: 'create',
      name: 'X',
      conditions: ['title contains a', 'collection is nope'],
    });
    expect(errorOf(second).message).toBe(
      'conditions[1]: the value of \'collection\' must be a collection key (8 characters from 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ); got "nope".',
    );
    expect(world.server.log).toHaveLength(0);
    expect(searches()).toHaveLength(0);
  });

  it('on the CLI: --condition once per condition; a retry with the same idempotency key replays, creating nothing twice', async () => {
    const env = { ...world.box.env, ZOTERO_API_URL: world.server.url, ZOTERO_API_KEY: KEY };
    const argv = [
      'saved-search',
      'create',
      'Greenland',
      '--condition',
      'title contains Greenland',
      '--condition',
      'joinMode any',
      '--idempotency-key',
      'greenland-1',
    ];
    const first = await zotAt(argv, { env });
    expect(first.code).toBe(0);
    const data = first.json().data as { created: string[]; sync_required: boolean };
    expect(data.sync_required).toBe(true);
    expect(searches().map((s) => s.key)).toEqual(data.created);
    world.server.clearLog();
    const again = await zotAt(argv, { env });
    expect(again.stdout).toBe(first.stdout);
    expect(world.server.log).toHaveLength(0);
    expect(searches()).toHaveLength(1);
  });

  it('--dry-run prints the parsed conditions offline', async () => {
    const r = await zotAt(
      ['saved-search', 'create', 'Dry', '--condition', 'creator contains Hansen', '--dry-run'],
      {
        env: { ...world.box.env, ZOTERO_API_URL: world.server.url },
      },
    );
    expect(r.code).toBe(0);
    expect((r.json().data as { would: Record<string, unknown> }).would).toMatchObject({
      command: 'saved-search create',
      conditions: [{ condition: 'creator', operator: 'contains', value: 'Hansen' }],
    });
    expect(world.server.log).toHaveLength(0);
  });
});

describe('delete', () => {
  it('reads the search with the library version, deletes it in one DELETE; not_found for an unknown key', async () => {
    const [key] = world.server
      .library(USER)
      .addSearches([{ name: 'Old', conditions: [{ condition: 'tag', operator: 'is', value: 'x' }] }]);
    const r = await call('zotero_manage_saved_searches', { action: 'delete', search_key: key });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ deleted: key, deletedName: 'Old' });
    expect(sent()).toEqual([`GET /${USER}/searches`, `DELETE /${USER}/searches`]);
    const del = world.server.log.find((e) => e.method === 'DELETE')!;
    expect(del.query).toEqual({ searchKey: key });
    expect(del.headers['if-unmodified-since-version']).toBeDefined();
    expect(searches()).toHaveLength(0);

    const missing = await call('zotero_manage_saved_searches', { action: 'delete', search_key: key });
    expect(errorOf(missing)).toMatchObject({
      code: 'not_found',
      message: `Saved search ${key} does not exist in library ${USER}; nothing was deleted.`,
    });
  });

  it('zot saved-search delete is destructive: without --yes and no terminal, confirmation_required and nothing sent', async () => {
    const [key] = world.server.library(USER).addSearches([{ name: 'Keep', conditions: [] }]);
    const env = { ...world.box.env, ZOTERO_API_URL: world.server.url, ZOTERO_API_KEY: KEY };
    const r = await zotAt(['saved-search', 'delete', key!], { env });
    expect(r.code).toBe(3);
    expect((r.json() as { error: { code: string } }).error.code).toBe('confirmation_required');
    expect(world.server.log.filter((e) => e.method !== 'GET')).toHaveLength(0);
    expect(searches()).toHaveLength(1);
    const yes = await zotAt(['saved-search', 'delete', key!, '--yes'], { env });
    expect(yes.code).toBe(0);
    expect(searches()).toHaveLength(0);
  });
});
