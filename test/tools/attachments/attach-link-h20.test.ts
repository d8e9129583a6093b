/**
 * `zot attach KEY --file PATH --link` / `zotero_attach_file` with `link: true`: a `linked_file`
 * attachment pointing at the file where it is (absolute path, content type from the bytes), no
 * upload, on both write paths (the desktop's local API, the Web API); a group refused before
 * anything is sent; the dry-run plan; a lost answer retried with the same idempotency key.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LocalWritesConfig } from '../../support/zotero-server/local-writes.js';
import type { RequestLogEntry } from '../../support/zotero-server/index.js';
import { tools } from '../../../src/tools/index.js';
import { startDroppingProxy } from '../../support/dropping-proxy.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { ALICE, KEY, startWorld, type World } from '../../core/library/world.js';

const LOCAL_KEY = 'L0calK3yAbCdEf1234567890abcdefgh';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');

let world: World;
let localUrl: string;
let writes: LocalWritesConfig;

beforeAll(async () => {
  world = await startWorld();
  localUrl = world.server.serveLocalApi({ userID: ALICE, groups: [10] });
  writes = world.server.serveLocalWrites();
});
afterAll(() => world.close());
beforeEach(() => {
  writes.keys.clear();
  writes.keys.set(LOCAL_KEY, { remember: true, appName: 'Zoteus' });
  world.server.clearLog();
});

const lib = () => world.server.library(`users/${ALICE}`);
const local = (e: RequestLogEntry): boolean => e.path.startsWith('/api');
const changes = (): RequestLogEntry[] =>
  world.server.log.filter((e) => e.method !== 'GET' && !(Array.isArray(e.body) && e.body.length === 0));

function desktopEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  return world.env({
    ZOTERO_API_KEY: undefined,
    ZOTEUS_LOCAL_API_URL: localUrl,
    ZOTEUS_LOCAL_API_KEY: LOCAL_KEY,
    ...extra,
  });
}

function file(name: string, bytes: Buffer): string {
  const path = join(world.box.dir, name);
  writeFileSync(path, bytes);
  return path;
}

function parentItem(): string {
  const [parent] = lib().addItems([{ title: 'Linked parent' }]) as [string];
  world.server.clearLog();
  return parent;
}

async function zot(argv: string[], env: Record<string, string>) {
  const r = await zotAt([...argv, '--json'], { env });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read the envelope loosely
  return { code: r.code, env: r.json() as any };
}

describe('zot attach --file PATH --link', () => {
  it('through the desktop: one create of a linked_file item with the absolute path; no upload, nothing to the cloud', async () => {
    const parent = parentItem();
    // Named .bin: the content type comes from the bytes.
    const path = file('linked-paper.bin', PDF);
    const r = await zot(['attach', parent, '--file', path, '--link'], desktopEnv());
    expect(r.code).toBe(0);
    expect(r.env.ok).toBe(true);
    expect(r.env.data.written_to).toBe('desktop');
    const [done] = r.env.data.succeeded;
    expect(done).toMatchObject({
      file: path,
      path,
      filename: 'linked-paper.bin',
      title: 'linked-paper.bin',
      contentType: 'application/pdf',
      size: PDF.length,
      upload: 'linked',
    });
    expect(lib().items.get(done.key)).toMatchObject({
      itemType: 'attachment',
      linkMode: 'linked_file',
      parentItem: parent,
      path,
      contentType: 'application/pdf',
      title: 'linked-paper.bin',
    });
    expect(changes().map((e) => `${e.method} ${e.path}`)).toEqual(['POST /api/users/0/items']);
    expect(changes()[0]?.headers['zotero-api-key']).toBe(LOCAL_KEY);
    expect(world.server.log.filter((e) => !local(e))).toEqual([]);
    expect(world.server.log.filter((e) => /\/file$|\/uploads\//.test(e.path))).toEqual([]);
  });

  it('through the Web API: the same item, one create, written_to cloud', async () => {
    const parent = parentItem();
    const path = file('cloud-linked.pdf', PDF);
    const r = await zot(
      ['attach', parent, '--file', path, '--link', '--title', 'My copy'],
      world.env({ ZOTERO_API_KEY: KEY, ZOTEUS_WRITES: 'cloud', ZOTEUS_LOCAL_API_URL: localUrl }),
    );
    expect(r.env.ok).toBe(true);
    expect(r.env.data.written_to).toBe('cloud');
    const [done] = r.env.data.succeeded;
    expect(lib().items.get(done.key)).toMatchObject({ linkMode: 'linked_file', path, title: 'My copy' });
    expect(changes().map((e) => `${e.method} ${e.path}`)).toEqual([`POST /users/${ALICE}/items`]);
    expect(world.server.log.filter(local)).toEqual([]);
  });

  it('a group: validation_error in the user’s terms, before any request', async () => {
    const path = file('group.pdf', PDF);
    const r = await zot(['attach', 'ABCD2345', '--file', path, '--link', '--library-id', '10'], desktopEnv());
    expect(r.code).toBe(3);
    expect(r.env.error).toMatchObject({
      code: 'validation_error',
      field: 'library_id',
      message:
        'Zotero keeps linked files only in your own library ("My Library"), so group 10 cannot hold a link to a file on this computer: nothing was attached.',
      hint: 'Attach a copy to the group instead (without --link), or link the file under an item of your own library.',
    });
    expect(world.server.log).toEqual([]);
  });

  it('with inline content, or under an attachment: validation_error, nothing created', async () => {
    const r = await zot(['attach', 'ABCD2345', '--content', PDF.toString('base64'), '--link'], desktopEnv());
    expect(r.env.error).toMatchObject({ code: 'validation_error', field: 'content_base64' });
    const parent = parentItem();
    const [att] = lib().addItems([
      { itemType: 'attachment', parentItem: parent, linkMode: 'imported_file', filename: 'x.pdf' },
    ]) as [string];
    world.server.clearLog();
    const under = await zot(['attach', att, '--file', file('x.pdf', PDF), '--link'], desktopEnv());
    expect(under.env.error).toMatchObject({
      code: 'validation_error',
      field: 'parent_item',
      message: `${att} is an attachment: a linked file goes under a regular item.`,
    });
    expect(changes()).toEqual([]);
  });

  it('--dry-run shows the plan: the path it would point at, nothing sent', async () => {
    const path = file('planned.pdf', PDF);
    const r = await zot(['attach', 'ABCD2345', '--file', path, '--link', '--dry-run'], desktopEnv());
    expect(r.env.ok).toBe(true);
    const plan = JSON.stringify(r.env.data);
    expect(plan).toContain(
      'A linked-file attachment under ABCD2345, pointing at the file where it is (its absolute path): nothing is uploaded',
    );
    expect(plan).toContain(`"path":${JSON.stringify(path)}`);
    expect(world.server.log).toEqual([]);
  });
});

describe('zotero_attach_file link: true, retried after a lost answer', () => {
  it('the desktop applied the create, its answer was lost: the retry with the same key finds the item, one link', async () => {
    const proxy = await startDroppingProxy(world.server.url);
    const mcp = await connect(tools, {
      ZOTERO_API_URL: world.server.url,
      ZOTEUS_LOCAL_API_URL: `${proxy.url}/api`,
      ZOTEUS_LOCAL_API_KEY: LOCAL_KEY,
    });
    try {
      const parent = parentItem();
      const path = file('retried.pdf', PDF);
      // The write probe first (its empty POST must not be the one dropped).
      await mcp.client.callTool({ name: 'zotero_whoami', arguments: {} });
      proxy.drop({ method: 'POST', path: /^\/api\/users\/0\/items$/ });
      const call = async () =>
        (await mcp.client.callTool({
          name: 'zotero_attach_file',
          arguments: { parent_item: parent, path: [path], link: true, idempotency_key: 'link-retry-h20' },
        })) as CallToolResult;
      let result = await call();
      if (result.isError) {
        const error = (result._meta as Record<string, { retryable: boolean }>)['zoteus/error'];
        expect(error?.retryable, JSON.stringify(result.content)).toBe(true);
        result = await call();
      }
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(proxy.dropped).toEqual(['POST /api/users/0/items']);
      const links = [...lib().items.values()].filter(
        (i) => i.parentItem === parent && i.linkMode === 'linked_file' && !i.deleted,
      );
      expect(links).toHaveLength(1);
      const out = result.structuredContent as { succeeded: Array<{ key: string }> };
      expect(out.succeeded.map((s) => s.key)).toEqual([links[0]?.key]);
      expect(result._meta?.['zoteus/written_to']).toBe('desktop');
      expect(world.server.log.filter((e) => !local(e) && e.method !== 'GET')).toEqual([]);
    } finally {
      await mcp.close();
      await proxy.close();
    }
  });
});
