/**
 * Issue 16, point 19: a key that the addressed library lacks but another library of this
 * computer's Zotero holds (the desktop's zotero.sqlite: the sample user 8675309 and group 4711)
 * is not_found saying which library has it and how to address it, in each surface's words;
 * finding it there is a local lookup, never a request to the cloud.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../src/tools/index.js';
import { runZot } from '../support/cli.js';
import { connect } from '../surfaces/mcp/harness.js';
import {
  KEY,
  OTHER_KEY,
  SAMPLE_KEYS,
  WEB_GROUP_ID,
  startDesktopWorld,
  type DesktopWorld,
} from '../core/library/router-world.js';

const USER = `users/${SAMPLE_KEYS.user.userID}`;
const GROUP_ID = SAMPLE_KEYS.group.groupID;
const GROUP = `group ${GROUP_ID} (Ocean Lab (shared))`;
const GROUP_ITEM = SAMPLE_KEYS.group.items.groupArticle;
const USER_ITEM = SAMPLE_KEYS.user.items.seaLevelArticle;

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

describe('no key, the desktop’s zotero.sqlite', () => {
  let mcp: Mcp;
  beforeAll(async () => {
    mcp = await connect(tools, world.env());
  });
  afterAll(async () => {
    await mcp.close();
  });

  it('a group’s key read in the personal library names the group and the library_id that reads it', async () => {
    expect(errorOf(await call(mcp, 'zotero_get_item', { item_key: GROUP_ITEM }))).toEqual({
      code: 'not_found',
      message: `No item "${GROUP_ITEM}" in ${USER}. This computer's Zotero has it in ${GROUP}.`,
      hint: `Add library_id: ${GROUP_ID} to read it there.`,
      field: 'item_key',
      retryable: false,
    });
    const there = await call(mcp, 'zotero_get_item', { item_key: GROUP_ITEM, library_id: GROUP_ID });
    expect(there.isError).toBeFalsy();
  });

  it('a personal item’s key read in the group: the default library, reached by leaving library_id out', async () => {
    expect(
      errorOf(await call(mcp, 'zotero_get_item', { item_key: USER_ITEM, library_id: GROUP_ID })),
    ).toMatchObject({
      code: 'not_found',
      message: `No item "${USER_ITEM}" in groups/${GROUP_ID}. This computer's Zotero has it in My Library (${USER}).`,
      hint: 'Leave out library_id to read it there (the default library).',
    });
  });

  it('every read that looks an item up says it: summarize, pdf, note', async () => {
    for (const [name, input] of [
      ['zotero_get_fulltext', { item_key: GROUP_ITEM }],
      ['zotero_list_notes', { item_key: GROUP_ITEM }],
      ['zotero_summarize', { item_keys: [GROUP_ITEM] }],
    ] as const) {
      const error = errorOf(await call(mcp, name, input));
      expect({ name, error }).toMatchObject({
        name,
        error: {
          code: 'not_found',
          message: `No item "${GROUP_ITEM}" in ${USER}. This computer's Zotero has it in ${GROUP}.`,
          hint: `Add library_id: ${GROUP_ID} to read it there.`,
        },
      });
    }
  });

  it('several keys: each found one is named with its library; keys found nowhere only as missing', async () => {
    const coral = SAMPLE_KEYS.group.items.coralReport;
    expect(
      errorOf(await call(mcp, 'zotero_summarize', { item_keys: [USER_ITEM, GROUP_ITEM, 'ZZZZ2345', coral] })),
    ).toMatchObject({
      code: 'not_found',
      field: 'item_keys',
      message: `No items "${GROUP_ITEM}", "ZZZZ2345", "${coral}" in ${USER}. This computer's Zotero has "${GROUP_ITEM}", "${coral}" in ${GROUP}.`,
      hint: `Add library_id: ${GROUP_ID} for "${GROUP_ITEM}", "${coral}".`,
    });
  });

  it('a key found nowhere keeps the plain message and the search hint', async () => {
    expect(errorOf(await call(mcp, 'zotero_get_item', { item_key: 'ZZZZ2345' }))).toMatchObject({
      message: `No item "ZZZZ2345" in ${USER}.`,
      hint: expect.stringContaining('zotero_search_items'),
    });
  });

  it('the CLI says it in flags, and the flag it names reads the item (needs `npm run build`)', async () => {
    const r = await runZot(['read', GROUP_ITEM], { env: world.env() });
    expect(r.code).toBe(4);
    expect(r.json().error).toMatchObject({
      code: 'not_found',
      message: `No item "${GROUP_ITEM}" in ${USER}. This computer's Zotero has it in ${GROUP}.`,
      hint: `Add --library-id ${GROUP_ID} to read it there.`,
    });
    const there = await runZot(['read', GROUP_ITEM, '--library-id', String(GROUP_ID)], { env: world.env() });
    expect(there.code).toBe(0);
    const back = await runZot(['note', USER_ITEM, '--library-id', String(GROUP_ID)], { env: world.env() });
    expect(back.code).toBe(4);
    expect(back.json().error).toMatchObject({
      hint: 'Leave out --library-id to read it there (the default library).',
    });
    expect(world.server.log).toEqual([]);
  });
});

describe('with a key: the Web API answers, the desktop is only looked at', () => {
  it('a key the cloud group lacks but the desktop’s library holds: the same requests as any unknown key', async () => {
    const mcp = await connect(tools, world.env({ ZOTERO_API_KEY: KEY }));
    try {
      const requests = async (key: string) => {
        const before = world.server.log.length;
        const error = errorOf(
          await call(mcp, 'zotero_get_item', { item_key: key, library_id: WEB_GROUP_ID }),
        );
        return { error, paths: world.server.log.slice(before).map((e) => `${e.method} ${e.path}`) };
      };
      const nowhere = await requests('ZZZZ2345');
      expect(nowhere.error?.message).toBe(`No item "ZZZZ2345" in groups/${WEB_GROUP_ID}.`);
      const held = await requests(USER_ITEM);
      expect(held.error).toMatchObject({
        code: 'not_found',
        message: `No item "${USER_ITEM}" in groups/${WEB_GROUP_ID}. This computer's Zotero has it in My Library (${USER}).`,
        hint: 'Leave out library_id to read it there (the default library).',
      });
      expect(held.paths).toEqual([`GET /groups/${WEB_GROUP_ID}/items/${USER_ITEM}`]);
      expect(nowhere.paths.filter((p) => !p.endsWith('/keys/current'))).toEqual([
        `GET /groups/${WEB_GROUP_ID}/items/ZZZZ2345`,
      ]);
    } finally {
      await mcp.close();
    }
  });

  it('the desktop’s personal library under another account’s key: addressed by its user id', async () => {
    const mcp = await connect(tools, world.env({ ZOTERO_API_KEY: OTHER_KEY }));
    try {
      // users/4242 is the key's own library, read on the Web API (the desktop is signed in as 8675309).
      const own = { item_key: USER_ITEM, library_type: 'user', library_id: 4242 };
      expect(errorOf(await call(mcp, 'zotero_get_item', own))).toMatchObject({
        code: 'not_found',
        message: `No item "${USER_ITEM}" in users/4242. This computer's Zotero has it in My Library (${USER}).`,
        hint: `Add library_type: user and library_id: ${SAMPLE_KEYS.user.userID} to read it there.`,
      });
      const there = await call(mcp, 'zotero_get_item', {
        item_key: USER_ITEM,
        library_type: 'user',
        library_id: SAMPLE_KEYS.user.userID,
      });
      expect(there.structuredContent).toMatchObject({ backend: 'sqlite', library: USER });
    } finally {
      await mcp.close();
    }
  });

  it('ZOTEUS_LOCAL=off: the desktop is not this installation’s, so nothing is said of it', async () => {
    const mcp = await connect(tools, world.env({ ZOTERO_API_KEY: KEY, ZOTEUS_LOCAL: 'off' }));
    try {
      expect(errorOf(await call(mcp, 'zotero_get_item', { item_key: GROUP_ITEM }))).toMatchObject({
        code: 'not_found',
        message: `No item "${GROUP_ITEM}" in ${USER}.`,
      });
    } finally {
      await mcp.close();
    }
  });
});
