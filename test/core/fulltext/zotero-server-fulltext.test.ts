/**
 * The test server's full-text routes, as Zotero documents them: `GET`/`PUT items/{key}/fulltext`
 * and `GET fulltext?since=V`, with versions, key permissions, group libraries, the seeding
 * helper, and the same GETs on the local API (user 0, read-only).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';

const OWNER_KEY = 'ownerKey0123456789abcdef';
const READ_KEY = 'readOnlyKey0123456789abc';
const OTHER_KEY = 'otherUserKey0123456789ab';
const PDF = 'PDFA2345';
const NOTE = 'NTEX2345';
const LINK = 'LINK2345';
const PARENT = 'PRNT2345';
const HTML = 'HTML2345';

let server: ZoteroTestServer;

beforeEach(async () => {
  server = await startZoteroServer();
  server.addUser({ userID: 1, username: 'alice' });
  server.addUser({ userID: 2, username: 'bob' });
  server.addKey({
    key: OWNER_KEY,
    userID: 1,
    access: { user: { library: true, write: true }, groups: { all: { library: true, write: true } } },
  });
  server.addKey({ key: READ_KEY, userID: 1, access: { user: { library: true } } });
  server.addKey({ key: OTHER_KEY, userID: 2, access: { user: { library: true, write: true } } });
  server.addGroup({ id: 7, name: 'Lab', owner: 1, members: [2], libraryEditing: 'admins' });
  for (const prefix of ['users/1', 'groups/7']) {
    server.library(prefix).addItems([
      { key: PARENT, itemType: 'book', title: 'A book' },
      {
        key: PDF,
        itemType: 'attachment',
        parentItem: PARENT,
        linkMode: 'imported_file',
        contentType: 'application/pdf',
        filename: 'a.pdf',
      },
      {
        key: HTML,
        itemType: 'attachment',
        parentItem: PARENT,
        linkMode: 'imported_url',
        contentType: 'text/html',
      },
      { key: LINK, itemType: 'attachment', parentItem: PARENT, linkMode: 'linked_url', url: 'https://x.org' },
      { key: NOTE, itemType: 'note', parentItem: PARENT, note: '<p>n</p>' },
    ]);
  }
});

afterEach(async () => {
  await server.close();
});

function call(
  path: string,
  o: { method?: string; key?: string | null; body?: unknown; type?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'Zotero-API-Version': '3' };
  const key = o.key === undefined ? OWNER_KEY : o.key;
  if (key !== null) headers['Zotero-API-Key'] = key;
  if (o.body !== undefined) headers['Content-Type'] = o.type ?? 'application/json';
  return fetch(`${server.url}${path}`, {
    method: o.method ?? 'GET',
    headers,
    body: o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
  });
}

const put = (path: string, body: unknown, o: { key?: string; type?: string } = {}) =>
  call(path, { method: 'PUT', body, ...o });

describe('items/{key}/fulltext', () => {
  it('PUT stores the text (204, the library version moves); GET serves it with its version', async () => {
    const lib = server.library('users/1');
    const before = lib.version;
    const res = await put(`/users/1/items/${PDF}/fulltext`, {
      content: 'Page one.\fPage two.',
      indexedPages: 2,
      totalPages: 3,
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('last-modified-version')).toBe(String(before + 1));
    expect(lib.version).toBe(before + 1);

    const got = await call(`/users/1/items/${PDF}/fulltext`);
    expect(got.status).toBe(200);
    expect(got.headers.get('last-modified-version')).toBe(String(before + 1));
    expect(await got.json()).toEqual({ content: 'Page one.\fPage two.', indexedPages: 2, totalPages: 3 });

    // A text document: the character counts; a new PUT replaces the old text whole.
    await put(`/users/1/items/${HTML}/fulltext`, { content: 'web page', indexedChars: 8, totalChars: 8 });
    expect(await (await call(`/users/1/items/${HTML}/fulltext`)).json()).toEqual({
      content: 'web page',
      indexedChars: 8,
      totalChars: 8,
    });
    await put(`/users/1/items/${PDF}/fulltext`, { content: 'again' });
    expect(await (await call(`/users/1/items/${PDF}/fulltext`)).json()).toEqual({ content: 'again' });
  });

  it('404 for an item without text, an unknown item, a note or a link to a URL', async () => {
    expect((await call(`/users/1/items/${PDF}/fulltext`)).status).toBe(404);
    expect((await call(`/users/1/items/ZZZZ2345/fulltext`)).status).toBe(404);
    for (const key of [NOTE, LINK, PARENT, 'ZZZZ2345']) {
      const res = await put(`/users/1/items/${key}/fulltext`, { content: 'x' });
      expect(res.status, key).toBe(404);
    }
    expect(() => server.library('users/1').setFulltext(NOTE, { content: 'x' })).toThrow(/attachments/);
  });

  it('PUT refuses a body that is not full-text JSON, and a key without write access', async () => {
    const path = `/users/1/items/${PDF}/fulltext`;
    expect((await put(path, 'content=x', { type: 'text/plain' })).status).toBe(400);
    expect((await put(path, '{not json')).status).toBe(400);
    expect((await put(path, [{ content: 'x' }])).status).toBe(400);
    expect((await put(path, { content: 3 })).status).toBe(400);
    expect((await put(path, { content: 'x', totalPages: -1 })).status).toBe(400);
    const readOnly = await put(path, { content: 'x' }, { key: READ_KEY });
    expect(readOnly.status).toBe(403);
    expect(await readOnly.text()).toBe('Write access denied');
    expect((await call(path, { key: OTHER_KEY })).status).toBe(403);
    expect((await call(path, { key: null })).status).toBe(403);
    expect(server.library('users/1').fulltext.size).toBe(0);
  });

  it('group libraries: members read; only admins write when editing is for admins', async () => {
    server.library('groups/7').setFulltext(PDF, { content: 'group text', indexedPages: 1, totalPages: 1 });
    // Bob's first key covers his own library only: no group access.
    expect((await call(`/groups/7/items/${PDF}/fulltext`, { key: OTHER_KEY })).status).toBe(403);
    const BOB_GROUPS = 'bobGroupKey0123456789abc';
    server.addKey({
      key: BOB_GROUPS,
      userID: 2,
      access: { groups: { all: { library: true, write: true } } },
    });
    expect(await (await call(`/groups/7/items/${PDF}/fulltext`, { key: BOB_GROUPS })).json()).toEqual({
      content: 'group text',
      indexedPages: 1,
      totalPages: 1,
    });
    const denied = await put(`/groups/7/items/${PDF}/fulltext`, { content: 'bob' }, { key: BOB_GROUPS });
    expect(denied.status).toBe(403);
    expect((await put(`/groups/7/items/${PDF}/fulltext`, { content: 'owner' })).status).toBe(204);
    expect(await (await call(`/groups/7/items/${PDF}/fulltext`)).json()).toEqual({ content: 'owner' });
  });

  it('deleting the item deletes its text', async () => {
    const lib = server.library('users/1');
    lib.setFulltext(PDF, { content: 'gone soon' });
    lib.deleteItem(PDF);
    expect(lib.fulltext.has(PDF)).toBe(false);
  });
});

describe('fulltext?since=V', () => {
  it('maps the keys of texts newer than V to their versions, with the library version', async () => {
    const lib = server.library('users/1');
    const v1 = lib.setFulltext(PDF, { content: 'one', indexedPages: 1, totalPages: 1 });
    lib.addItems([{ title: 'unrelated write' }]);
    const v2 = lib.setFulltext(HTML, { content: 'two', indexedChars: 3, totalChars: 3 });
    expect(v2).toBeGreaterThan(v1 + 1);

    const all = await call('/users/1/fulltext?since=0');
    expect(all.status).toBe(200);
    expect(all.headers.get('last-modified-version')).toBe(String(lib.version));
    expect(await all.json()).toEqual({ [PDF]: v1, [HTML]: v2 });
    expect(await (await call(`/users/1/fulltext?since=${v1}`)).json()).toEqual({ [HTML]: v2 });
    expect(await (await call(`/users/1/fulltext?since=${v2}`)).json()).toEqual({});

    // Without `since`: 400, as documented.
    expect((await call('/users/1/fulltext')).status).toBe(400);
    // Unchanged since the version the client has: 304.
    const res = await fetch(`${server.url}/users/1/fulltext?since=${v2}`, {
      headers: { 'Zotero-API-Key': OWNER_KEY, 'If-Modified-Since-Version': String(lib.version) },
    });
    expect(res.status).toBe(304);
    // The text of a deleted item is not listed.
    lib.deleteItem(HTML);
    expect(await (await call('/users/1/fulltext?since=0')).json()).toEqual({ [PDF]: v1 });
  });
});

describe('the local API', () => {
  it('serves the same GETs as users/0, without a key; PUT is not allowed (read-only)', async () => {
    const base = server.serveLocalApi({ userID: 1 });
    const v = server
      .library('users/1')
      .setFulltext(PDF, { content: 'local', indexedPages: 4, totalPages: 4 });
    const got = await fetch(`${base}/users/0/items/${PDF}/fulltext`);
    expect(got.status).toBe(200);
    expect(got.headers.get('last-modified-version')).toBe(String(v));
    expect(await got.json()).toEqual({ content: 'local', indexedPages: 4, totalPages: 4 });
    expect((await fetch(`${base}/users/0/items/${HTML}/fulltext`)).status).toBe(404);
    expect(await (await fetch(`${base}/users/0/fulltext?since=0`)).json()).toEqual({ [PDF]: v });
    const write = await fetch(`${base}/users/0/items/${PDF}/fulltext`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: 'x' }),
    });
    expect(write.status).toBe(405);
    server.setLocalApiEnabled(false);
    expect((await fetch(`${base}/users/0/items/${PDF}/fulltext`)).status).toBe(403);
  });
});
