/**
 * `zot attach KEY --file PATH` / `zotero_attach_file` when writes go to the desktop: the three
 * calls of the upload protocol through Zotero 10's local API (the test server's local-API mode,
 * `LocalFiles` in uploads.ts), with its differences: `If-None-Match: *` first, checked against
 * the synced hash; the raw `application/octet-stream` body to `/api/local/uploads/<uploadKey>`
 * with no key and no server id; authorization and registration as writes with both. Nothing
 * reaches the Web API.
 */
import { createHash } from 'node:crypto';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newServerId, type LocalWritesConfig } from '../../support/zotero-server/local-writes.js';
import type { RequestLogEntry } from '../../support/zotero-server/index.js';
import { tools } from '../../../src/tools/index.js';
import { connect } from '../../surfaces/mcp/harness.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { ALICE, startWorld, type World } from '../../core/library/world.js';

const LOCAL_KEY = 'L0calK3yAbCdEf1234567890abcdefgh';
const ONCE_KEY = 'Onc3K3yAbCdEf1234567890abcdefghi';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

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
const cloud = (e: RequestLogEntry): boolean => !local(e);
/** What the desktop was asked to change, the write probe's empty batch left out. */
const localWrites = (): RequestLogEntry[] =>
  world.server.log.filter(
    (e) => local(e) && e.method !== 'GET' && !(Array.isArray(e.body) && e.body.length === 0),
  );
const line = (e: RequestLogEntry): string =>
  `${e.method} ${e.path.replace(/\/uploads\/[0-9a-f]+$/, '/uploads/<uploadKey>')}`;

function env(extra: Record<string, string | undefined> = {}): Record<string, string> {
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

async function zot(argv: string[], e = env()) {
  const r = await zotAt([...argv, '--json'], { env: e });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read the envelope loosely
  return { code: r.code, stderr: r.stderr, env: r.json() as any };
}

/** An imported_file attachment of a new parent, its file on the desktop's disk. */
function attachmentOnDisk(bytes: Buffer, o: { synced?: boolean } = {}): { key: string; md5: string } {
  const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
  const [key] = lib().addItems([
    {
      itemType: 'attachment',
      parentItem: parent,
      linkMode: 'imported_file',
      title: 'old.pdf',
      filename: 'old.pdf',
      contentType: 'application/pdf',
    },
  ]) as [string];
  const sum = writes.files.seedDiskFile(lib(), key, bytes, o);
  world.server.clearLog();
  return { key, md5: sum };
}

describe('zot attach --file, writes going to the desktop', () => {
  it('a new attachment: item, authorization, raw upload to the receiver, registration; nothing to the cloud', async () => {
    const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
    const path = file('paper.pdf', PDF);
    utimesSync(path, 1_700_000_000.123, 1_700_000_000.123);
    world.server.clearLog();
    const r = await zot(['attach', parent, '--file', path]);
    expect(r.code).toBe(0);
    expect(r.env.ok).toBe(true);
    expect(r.env.data.written_to).toBe('desktop');
    const [done] = r.env.data.succeeded;
    expect(done).toMatchObject({
      filename: 'paper.pdf',
      md5: md5(PDF),
      size: PDF.length,
      upload: 'uploaded',
    });
    expect(world.server.log.filter(cloud)).toEqual([]);

    const sent = localWrites();
    const key = done.key as string;
    expect(sent.map(line)).toEqual([
      'POST /api/users/0/items',
      `POST /api/users/0/items/${key}/file`,
      'POST /api/local/uploads/<uploadKey>',
      `POST /api/users/0/items/${key}/file`,
    ]);
    const [create, authorize, upload, register] = sent as [
      RequestLogEntry,
      RequestLogEntry,
      RequestLogEntry,
      RequestLogEntry,
    ];
    // Authorization and registration are writes: the local key and the server id, If-None-Match.
    for (const step of [create, authorize, register]) {
      expect(step.headers['zotero-api-key']).toBe(LOCAL_KEY);
      expect(step.headers['zotero-server-id']).toBe(writes.serverId);
    }
    for (const step of [authorize, register]) {
      expect(step.headers['if-none-match']).toBe('*');
      expect(step.headers['if-match']).toBeUndefined();
    }
    const form = new URLSearchParams(authorize.body as string);
    expect(Object.fromEntries(form)).toEqual({
      md5: md5(PDF),
      filename: 'paper.pdf',
      filesize: String(PDF.length),
      mtime: '1700000000123',
      contentType: 'application/pdf',
    });
    expect(new URLSearchParams(register.body as string).get('upload')).toMatch(/^[0-9a-f]{32}$/);
    // The receiver: raw octet-stream with its length, no key, no server id.
    expect(upload.headers['content-type']).toBe('application/octet-stream');
    expect(upload.headers['content-length']).toBe(String(PDF.length));
    expect(upload.headers['zotero-api-key']).toBeUndefined();
    expect(upload.headers.authorization).toBeUndefined();
    expect(upload.headers['zotero-server-id']).toBeUndefined();
    // On the desktop's disk, and the item says so.
    expect(writes.files.disk.get(`users/${ALICE}/${key}`)).toMatchObject({
      md5: md5(PDF),
      filename: 'paper.pdf',
    });
    expect(lib().items.get(key)).toMatchObject({
      linkMode: 'imported_file',
      parentItem: parent,
      md5: md5(PDF),
    });
  });

  it('a new version of an attachment never synced: If-None-Match: * (not If-Match with the md5 on disk)', async () => {
    const old = attachmentOnDisk(Buffer.from('old bytes'));
    const next = Buffer.from('%PDF-1.7 the new version');
    const r = await zot(['attach', old.key, '--file', file('new.pdf', next)]);
    expect(r.env.ok).toBe(true);
    expect(r.env.data.succeeded[0]).toMatchObject({
      key: old.key,
      version: 'new',
      previousMd5: old.md5,
      md5: md5(next),
      upload: 'uploaded',
    });
    const sent = localWrites();
    expect(sent.map(line)).toEqual([
      `POST /api/users/0/items/${old.key}/file`,
      'POST /api/local/uploads/<uploadKey>',
      `POST /api/users/0/items/${old.key}/file`,
      // filename, title and content type brought in line with the new file
      `PATCH /api/users/0/items/${old.key}`,
    ]);
    expect(sent[0]?.headers['if-none-match']).toBe('*');
    expect(sent[0]?.headers['if-match']).toBeUndefined();
    expect(writes.files.disk.get(`users/${ALICE}/${old.key}`)?.md5).toBe(md5(next));
    expect(world.server.log.filter(cloud)).toEqual([]);
  });

  it('a new version of a synced attachment: If-None-Match: * gets 412, then If-Match with its md5 lands', async () => {
    const old = attachmentOnDisk(Buffer.from('synced bytes'), { synced: true });
    const next = Buffer.from('%PDF-1.7 replacing a synced file');
    const r = await zot(['attach', old.key, '--file', file('old.pdf', next)]);
    expect(r.env.ok).toBe(true);
    const auths = localWrites().filter((e) => e.path.endsWith('/file'));
    expect(auths.map((e) => [e.headers['if-none-match'], e.headers['if-match']])).toEqual([
      ['*', undefined],
      [undefined, old.md5],
      [undefined, old.md5],
    ]);
    expect(auths.map((e) => e.status)).toEqual([412, 200, 204]);
    expect(writes.files.disk.get(`users/${ALICE}/${old.key}`)?.md5).toBe(md5(next));
    expect(writes.files.synced.get(`users/${ALICE}/${old.key}`)).toBe(md5(next));
  });

  it('a file changed on disk since it last synced: both preconditions refused, nothing uploaded, and why', async () => {
    const old = attachmentOnDisk(Buffer.from('edited on disk'));
    writes.files.synced.set(`users/${ALICE}/${old.key}`, md5(Buffer.from('what zotero.org has')));
    const r = await zot(['attach', old.key, '--file', file('old.pdf', Buffer.from('newer'))]);
    expect(r.env.ok).toBe(false);
    expect(r.env.error.code).toBe('conflict');
    expect(r.env.error.failed).toEqual([
      {
        index: 0,
        file: expect.stringMatching(/old\.pdf$/),
        key: old.key,
        code: 412,
        reason: 'conflict',
        message: expect.stringContaining(
          `The Zotero desktop app would not replace the file of attachment ${old.key} (HTTP 412): it checks a new file against the one it last synced with zotero.org, and that is not the file on disk now (md5 ${old.md5}), which is all its local API shows. No file was uploaded.`,
        ),
      },
    ]);
    expect(localWrites().map((e) => e.status)).toEqual([412, 412]);
    expect(world.server.log.filter((e) => e.path.startsWith('/api/local/uploads/'))).toEqual([]);
    expect(writes.files.disk.get(`users/${ALICE}/${old.key}`)?.md5).toBe(old.md5);
  });

  it('the same bytes as on disk: upload exists, nothing sent at all', async () => {
    const bytes = Buffer.from('%PDF-1.4 same');
    const old = attachmentOnDisk(bytes);
    const r = await zot(['attach', old.key, '--file', file('old.pdf', bytes)]);
    expect(r.env.ok).toBe(true);
    expect(r.env.data.succeeded[0]).toMatchObject({ upload: 'exists', version: 'new' });
    expect(localWrites()).toEqual([]);
  });

  it('a name the desktop refuses (a backslash): validation_error before anything is written', async () => {
    const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
    world.server.clearLog();
    const r = await zot(['attach', parent, '--file', file('a\\b.pdf', PDF)]);
    expect(r.code).toBe(3);
    expect(r.env.error.code).toBe('validation_error');
    expect(r.env.error.message).toBe(
      "The Zotero desktop app does not take a file named 'a\\b.pdf' (a name with / or \\, or . or ..): nothing was attached.",
    );
    expect(localWrites()).toEqual([]);
  });

  it('a one-time key: the item lands, the authorization is refused (401), reported with the key, never as success', async () => {
    writes.keys.set(ONCE_KEY, { remember: false, appName: 'Zoteus' });
    const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
    world.server.clearLog();
    const r = await zot(
      ['attach', parent, '--file', file('once.pdf', PDF)],
      env({ ZOTEUS_LOCAL_API_KEY: ONCE_KEY }),
    );
    expect(r.env.ok).toBe(false);
    expect(r.env.error.code).toBe('auth_missing');
    const [failed] = r.env.error.failed;
    expect(failed).toMatchObject({ code: 401, reason: 'auth_missing', key: expect.any(String) });
    expect(failed.message).toContain('refused the local API key (HTTP 401');
    expect(failed.message).toContain(
      `The empty attachment item ${failed.key as string} could not be moved to the trash`,
    );
    expect(localWrites().map((e) => e.status)).toEqual([200, 401, 401]); // create, authorize, trash
    expect(writes.used).toContain(ONCE_KEY);
    expect(world.server.log.filter((e) => e.path.startsWith('/api/local/uploads/'))).toEqual([]);
  });

  it('the desktop switches databases before the authorization (412, another server id): reported, nothing more sent', async () => {
    const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
    world.server.clearLog();
    const before = writes.serverId;
    world.server.faults.concurrentEdit({
      match: { method: 'POST', path: /\/file$/ },
      apply: () => {
        writes.serverId = newServerId();
      },
    });
    try {
      const r = await zot(['attach', parent, '--file', file('moved.pdf', PDF)]);
      expect(r.env.ok).toBe(false);
      const [failed] = r.env.error.failed;
      expect(failed).toMatchObject({ reason: 'conflict', key: expect.any(String) });
      expect(failed.message).toContain('now serves another database (its Zotero-Server-ID changed)');
      expect(failed.message).toContain(
        `The empty attachment item ${failed.key as string} stays in the database the desktop served before`,
      );
      // The create and the refused authorization; no upload, no trash, no retry.
      expect(localWrites().map((e) => [line(e), e.status])).toEqual([
        ['POST /api/users/0/items', 200],
        [`POST /api/users/0/items/${failed.key as string}/file`, 412],
      ]);
      expect(localWrites()[1]?.headers['zotero-server-id']).toBe(before);
    } finally {
      world.server.faults.clear();
    }
  });

  it('on MCP, content_base64: through the desktop, written_to desktop', async () => {
    const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
    const e = env();
    const mcp = await connect(tools, {
      ZOTERO_API_URL: e.ZOTERO_API_URL as string,
      ZOTEUS_LOCAL_API_URL: localUrl,
      ZOTEUS_LOCAL_API_KEY: LOCAL_KEY,
    });
    try {
      world.server.clearLog();
      const result = await mcp.client.callTool({
        name: 'zotero_attach_file',
        arguments: { parent_item: parent, content_base64: PDF.toString('base64'), filename: 'inline.pdf' },
      });
      expect(result.isError).toBeFalsy();
      expect(result._meta?.['zoteus/written_to']).toBe('desktop');
      const out = result.structuredContent as { succeeded: Array<{ key: string; md5: string }> };
      expect(out.succeeded[0]?.md5).toBe(md5(PDF));
      expect(localWrites()).toHaveLength(4);
      expect(world.server.log.filter(cloud)).toEqual([]);
    } finally {
      await mcp.close();
    }
  });
});

describe('zot attach --oa, writes going to the desktop', () => {
  it('the open-access PDF is read, checked and uploaded through the local API; nothing to the cloud', async () => {
    const { startOaFakes } = await import('../../support/oa-services.js');
    const { makePdf } = await import('../../support/documents/index.js');
    const oa = await startOaFakes();
    try {
      const DOI = '10.5555/desk.2026.1';
      const paper = makePdf({ pages: [['Desktop Open Access Paper', `doi:${DOI}`]] });
      const [parent] = lib().addItems([{ title: 'Desktop Open Access Paper', DOI }]) as [string];
      oa.addUnpaywall(DOI, [{ url_for_pdf: oa.addFile('desk.pdf', paper), version: 'publishedVersion' }]);
      world.server.clearLog();
      const r = await zot(['attach', parent, '--oa'], env(oa.env()));
      expect(r.env.ok).toBe(true);
      expect(r.env.data.written_to).toBe('desktop');
      const [done] = r.env.data.succeeded;
      expect(done).toMatchObject({ md5: md5(paper), upload: 'uploaded' });
      expect(writes.files.disk.get(`users/${ALICE}/${done.key as string}`)?.md5).toBe(md5(paper));
      expect(localWrites().map(line)).toEqual([
        'POST /api/users/0/items',
        `POST /api/users/0/items/${done.key as string}/file`,
        'POST /api/local/uploads/<uploadKey>',
        `POST /api/users/0/items/${done.key as string}/file`,
      ]);
      expect(world.server.log.filter(cloud)).toEqual([]);
    } finally {
      await oa.close();
    }
  });
});

describe("the test server's upload receiver follows the local API's rules", () => {
  async function authorize(bytes: Buffer): Promise<{ url: string; key: string }> {
    const [parent] = lib().addItems([{ title: 'Parent' }]) as [string];
    const [key] = lib().addItems([
      { itemType: 'attachment', parentItem: parent, linkMode: 'imported_file', filename: 'f.bin' },
    ]) as [string];
    const response = await fetch(`${localUrl}/users/0/items/${key}/file`, {
      method: 'POST',
      headers: {
        'Zotero-API-Key': LOCAL_KEY,
        'Zotero-Server-ID': writes.serverId,
        'If-None-Match': '*',
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        md5: md5(bytes),
        filename: 'f.bin',
        filesize: String(bytes.length),
        mtime: String(Date.now()),
      }).toString(),
    });
    expect(response.status).toBe(200);
    const auth = (await response.json()) as { url: string; prefix: string; suffix: string };
    expect([auth.prefix, auth.suffix]).toEqual(['', '']);
    expect(auth.url).toMatch(/\/api\/local\/uploads\/[0-9a-f]{32}$/);
    return { url: auth.url, key };
  }

  it('text/plain corrupts binary bytes (400, key discarded: then 404); JSON is 400; a wrong server id 412', async () => {
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x41]);
    const a = await authorize(binary);
    const plain = await fetch(a.url, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: binary,
    });
    expect(plain.status).toBe(400);
    const again = await fetch(a.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream' },
      body: binary,
    });
    expect(again.status).toBe(404);

    const b = await authorize(binary);
    const json = await fetch(b.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: binary,
    });
    expect(json.status).toBe(400);
    const wrongId = await fetch(b.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream', 'Zotero-Server-ID': 'XXXXXXXXXXXX' },
      body: binary,
    });
    expect(wrongId.status).toBe(412);
    const raw = await fetch(b.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream' },
      body: binary,
    });
    expect(raw.status).toBe(201);
  });

  it('an mtime in seconds, a filename with a slash: 400 at the authorization', async () => {
    const [key] = lib().addItems([
      { itemType: 'attachment', linkMode: 'imported_file', filename: 'f.bin' },
    ]) as [string];
    const ask = (form: Record<string, string>) =>
      fetch(`${localUrl}/users/0/items/${key}/file`, {
        method: 'POST',
        headers: {
          'Zotero-API-Key': LOCAL_KEY,
          'Zotero-Server-ID': writes.serverId,
          'If-None-Match': '*',
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ md5: md5(PDF), filesize: String(PDF.length), ...form }).toString(),
      });
    expect((await ask({ filename: 'f.pdf', mtime: '1700000000' })).status).toBe(400);
    expect((await ask({ filename: 'a/f.pdf', mtime: '1700000000000' })).status).toBe(400);
    expect((await ask({ filename: 'f.pdf', mtime: '1700000000000' })).status).toBe(200);
  });
});
