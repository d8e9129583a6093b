/**
 * `zot attach KEY --file PATH…` / `zotero_attach_file` against the test server's upload protocol:
 * the item, the authorization (md5, size, mtime in ms, If-None-Match), the storage POST (no
 * Zotero headers), registration and the md5 read back; `exists`, quota, registration failure,
 * md5 mismatch, group file editing, dry-run and the MCP inputs. The CLI runs in process.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createHash } from 'node:crypto';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { groups, tools } from '../../../src/tools/index.js';
import { startDroppingProxy } from '../../support/dropping-proxy.js';
import { ALICE, BOB } from '../../core/library/world.js';
import { LIB, mcpOf, startItemsWorld, type ItemsWorld } from '../items/setup.js';

let w: ItemsWorld;
let parent: string;
beforeEach(async () => {
  w = await startItemsWorld();
  [parent] = w.world.server.library(LIB).addItems([{ title: 'Parent' }]) as [string];
});
afterEach(async () => {
  await w.close();
});

async function zot(argv: string[], extraEnv: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) =>
    Object.assign(
      new Writable({
        write(chunk, _encoding, done) {
          append(String(chunk));
          done();
        },
      }),
      { isTTY: false, columns: 100 },
    );
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  stdin.end('');
  const code = await runCli({
    argv,
    env: w.env(extraEnv),
    io: { stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), stdin },
    tools,
    groups,
  });
  const env = JSON.parse(stdout) as {
    ok: boolean | 'partial';
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read the envelope loosely
    data: Record<string, any>;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
    error: { code: string; message: string; failed?: any[] };
  };
  return { code, env, stderr };
}

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

function file(name: string, bytes: Buffer): string {
  const path = join(w.world.box.dir, name);
  writeFileSync(path, bytes);
  return path;
}

const attachments = (prefix = LIB) =>
  [...w.world.server.library(prefix).items.values()].filter((i) => i.itemType === 'attachment');
const logOf = (method: string, path: RegExp) =>
  w.world.server.log.filter((e) => e.method === method && path.test(e.path));

describe('zot attach KEY --file', () => {
  it('uploads a small file: item, authorization with mtime in ms, storage POST without Zotero headers, md5 read back', async () => {
    // Named .bin: the content type comes from the bytes.
    const path = file('paper.bin', PDF);
    utimesSync(path, 1_700_000_000.123, 1_700_000_000.123);
    const r = await zot(['attach', parent, '--file', path, '--title', 'The paper']);
    expect(r.code).toBe(0);
    const key = r.env.data.succeeded[0].key as string;
    expect(r.env.data).toMatchObject({
      parentItem: parent,
      failed: [],
      succeeded: [
        {
          file: path,
          filename: 'paper.bin',
          title: 'The paper',
          contentType: 'application/pdf',
          size: PDF.length,
          md5: md5(PDF),
          upload: 'uploaded',
        },
      ],
    });
    expect(attachments()).toHaveLength(1);
    expect(attachments()[0]).toMatchObject({
      key,
      parentItem: parent,
      linkMode: 'imported_file',
      contentType: 'application/pdf',
      filename: 'paper.bin',
      md5: md5(PDF),
      mtime: 1_700_000_000_123,
    });
    expect(w.world.server.files.files.get(`${LIB}/${key}`)).toMatchObject({
      md5: md5(PDF),
      size: PDF.length,
    });

    const fileCalls = logOf('POST', new RegExp(`/items/${key}/file$`));
    expect(fileCalls).toHaveLength(2);
    const auth = new URLSearchParams(String(fileCalls[0]!.body));
    expect(Object.fromEntries(auth)).toEqual({
      md5: md5(PDF),
      filename: 'paper.bin',
      filesize: String(PDF.length),
      mtime: '1700000000123',
      contentType: 'application/pdf',
    });
    expect(fileCalls[0]!.headers['if-none-match']).toBe('*');
    expect(fileCalls[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(String(fileCalls[1]!.body)).toMatch(/^upload=[0-9a-f]{32}$/);
    expect(fileCalls[1]!.headers['if-none-match']).toBe('*');

    const storage = logOf('POST', /^\/storage\/upload\//);
    expect(storage).toHaveLength(1);
    expect(storage[0]!.status).toBe(201);
    expect(
      Object.keys(storage[0]!.headers).filter((h) => h.startsWith('zotero-') || h === 'authorization'),
    ).toEqual([]);
    expect(storage[0]!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
  });

  it('several files in one call; bytes the server already holds are not sent again (exists)', async () => {
    const a = file('a.txt', Buffer.from('first file'));
    const b = file('b.txt', Buffer.from('second file'));
    w.world.server.files.addBlob(md5(Buffer.from('second file')), 11);
    const r = await zot(['attach', parent, '--file', a, '--file', b]);
    expect(r.code).toBe(0);
    expect(
      r.env.data.succeeded.map((f: { filename: string; upload: string; contentType: string }) => [
        f.filename,
        f.upload,
        f.contentType,
      ]),
    ).toEqual([
      ['a.txt', 'uploaded', 'text/plain'],
      ['b.txt', 'exists', 'text/plain'],
    ]);
    expect(logOf('POST', /^\/storage\/upload\//)).toHaveLength(1);
    expect(
      attachments()
        .map((i) => i.md5)
        .sort(),
    ).toEqual([md5(Buffer.from('first file')), md5(Buffer.from('second file'))].sort());
    // Both items in one create request.
    expect(logOf('POST', /^\/users\/1\/items$/)).toHaveLength(1);
  });

  it('over quota: that file fails saying so and how much is free, its item goes to the trash; the other lands (exit 7)', async () => {
    w.world.server.files.setQuota(LIB, 0.01);
    const small = file('small.txt', Buffer.from('small enough'));
    const big = file('big.bin', Buffer.alloc(20_000, 7));
    const r = await zot(['attach', parent, '--file', small, '--file', big]);
    expect(r.code).toBe(7);
    expect(r.env.ok).toBe('partial');
    expect(r.env.data.succeeded).toHaveLength(1);
    const failed = r.env.data.failed[0];
    expect(failed).toMatchObject({
      index: 1,
      file: big,
      code: 413,
      reason: 'validation_error',
      trashed: true,
    });
    expect(failed.message).toContain(`${big} (20000 bytes) does not fit in the library's file storage`);
    expect(failed.message).toContain('(0 MB free of 0.01 MB)');
    expect(failed.message).toContain('moved to the trash');
    const bigItem = attachments().find((i) => i.filename === 'big.bin');
    expect(bigItem?.deleted).toBe(true);
    expect(attachments().filter((i) => !i.deleted)).toHaveLength(1);
    expect(logOf('POST', /^\/storage\/upload\//)).toHaveLength(1);
  });

  it('a registration the server refuses fails the file (its item trashed), never reported as attached', async () => {
    w.world.server.files.failRegistration();
    const r = await zot(['attach', parent, '--file', file('x.pdf', PDF)]);
    expect(r.code).not.toBe(0);
    expect(r.env.ok).toBe(false);
    const failed = r.env.error.failed![0];
    expect(failed).toMatchObject({ code: 400, trashed: true });
    expect(failed.message).toContain('The file reached the storage server but Zotero did not register it');
    expect(failed.message).toContain('Remote file not found');
    expect(attachments()).toHaveLength(1);
    expect(attachments()[0]!.deleted).toBe(true);
    expect(w.world.server.files.files.size).toBe(0);
  });

  it('a stored md5 that differs from the file is an error naming the item, not a success', async () => {
    w.world.server.files.corruptStoredMd5();
    const r = await zot(['attach', parent, '--file', file('x.pdf', PDF)]);
    expect(r.code).not.toBe(0);
    const failed = r.env.error.failed![0];
    const key = attachments()[0]!.key;
    expect(failed).toMatchObject({ key, reason: 'api_error' });
    expect(failed.message).toContain(`not the file's ${md5(PDF)}: the stored file is not this file`);
  });

  it('a group that lets nobody edit files: permission_denied naming the group, nothing created', async () => {
    w.world.server.addGroup({
      id: 60,
      name: 'No files here',
      owner: BOB,
      members: [ALICE],
      fileEditing: 'none',
    });
    const r = await zot(['attach', parent, '--file', file('x.pdf', PDF), '--library-id', '60']);
    expect(r.env.error).toMatchObject({ code: 'permission_denied' });
    expect(r.env.error.message).toContain("The group 'No files here' (60) lets nobody edit files");
    expect(attachments('groups/60')).toHaveLength(0);
    expect(logOf('POST', /./)).toHaveLength(0);
  });

  it('a group that lets only admins edit files, a plain member: permission_denied naming the group, nothing created', async () => {
    w.world.server.addGroup({
      id: 61,
      name: 'Admins edit files',
      owner: BOB,
      members: [ALICE],
      fileEditing: 'admins',
    });
    const [groupParent] = w.world.server.library('groups/61').addItems([{ title: 'In 61' }]) as [string];
    w.world.server.clearLog();
    const r = await zot(['attach', groupParent, '--file', file('m.pdf', PDF), '--library-id', '61']);
    expect(r.code).not.toBe(0);
    expect(r.env.error).toMatchObject({ code: 'permission_denied' });
    expect(r.env.error.message).toBe(
      "The group 'Admins edit files' (61) lets only its admins edit files, so no file can be attached there: nothing was created.",
    );
    expect(attachments('groups/61')).toHaveLength(0);
    expect(logOf('POST', /./)).toHaveLength(0);
    expect(w.world.server.files.files.size).toBe(0);
  });

  it('a group that lets only admins edit files, an admin member: the upload is taken', async () => {
    w.world.server.addGroup({
      id: 62,
      name: 'Admin Alice',
      owner: BOB,
      members: [],
      admins: [ALICE],
      fileEditing: 'admins',
    });
    const [groupParent] = w.world.server.library('groups/62').addItems([{ title: 'In 62' }]) as [string];
    const r = await zot(['attach', groupParent, '--file', file('a.pdf', PDF), '--library-id', '62']);
    expect(r.code).toBe(0);
    const key = r.env.data.succeeded[0].key as string;
    expect(r.env.data.succeeded[0]).toMatchObject({ md5: md5(PDF), upload: 'uploaded' });
    expect(attachments('groups/62').map((i) => i.key)).toEqual([key]);
    expect(w.world.server.files.files.get(`groups/62/${key}`)).toMatchObject({ md5: md5(PDF) });
  });

  it('a group that lets members edit files takes the upload; a server-side File editing denied is permission_denied', async () => {
    const [groupParent] = w.world.server.library('groups/10').addItems([{ title: 'Group parent' }]) as [
      string,
    ];
    const ok = await zot(['attach', groupParent, '--file', file('g.pdf', PDF), '--library-id', '10']);
    expect(ok.code).toBe(0);
    expect(w.world.server.files.files.has(`groups/10/${ok.env.data.succeeded[0].key}`)).toBe(true);
    // The metadata allowed it but the server refuses (a setting changed meanwhile).
    w.world.server.faults.status({ status: 403, body: 'File editing denied', match: { path: /\/file$/ } });
    const denied = await zot(['attach', groupParent, '--file', file('h.pdf', PDF), '--library-id', '10']);
    expect(denied.env.error.failed![0]).toMatchObject({
      reason: 'permission_denied',
      code: 403,
      trashed: true,
    });
    expect(denied.env.error.failed![0].message).toContain('The group 10 does not let this key edit files');
  });

  it('412 (the same file stored meanwhile by another client): re-read, found there, not sent again', async () => {
    const path = file('race.pdf', PDF);
    w.world.server.faults.concurrentEdit({
      match: { method: 'POST', path: /\/items\/[A-Z0-9]{8}\/file$/ },
      apply: (server) => {
        const att = [...server.library(LIB).items.values()].find((i) => i.itemType === 'attachment')!;
        server.files.files.set(`${LIB}/${att.key}`, {
          md5: md5(PDF),
          filename: 'race.pdf',
          size: PDF.length,
          mtime: 1,
          contentType: 'application/pdf',
        });
        server.library(LIB).editItem(att.key, { md5: md5(PDF) });
      },
    });
    const r = await zot(['attach', parent, '--file', path]);
    expect(r.code).toBe(0);
    expect(r.env.data.succeeded[0]).toMatchObject({ upload: 'exists', md5: md5(PDF) });
    const auth = logOf('POST', /\/file$/);
    expect(auth.map((e) => e.status)).toEqual([412]);
    expect(logOf('POST', /^\/storage\/upload\//)).toHaveLength(0);
  });

  it('--dry-run prints name, size, md5, content type and parent, offline', async () => {
    const path = file('plan.txt', Buffer.from('planned'));
    w.world.server.clearLog();
    const r = await zot(['attach', parent, '--file', path, '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.env.data.would).toMatchObject({
      parent_item: parent,
      files: [
        {
          file: path,
          filename: 'plan.txt',
          size: 7,
          md5: md5(Buffer.from('planned')),
          contentType: 'text/plain',
        },
      ],
    });
    expect(w.world.server.log).toHaveLength(0);
  });
});

describe('zot attach: the connection lost mid-upload', () => {
  it('a reset after 64 KB fails that file (network_error, its item trashed), the other lands (exit 7); the retry sends only it, once', async () => {
    const big = Buffer.concat([PDF, Buffer.alloc(400_000, 5)]);
    const a = file('big.pdf', big);
    const b = file('note.txt', Buffer.from('a small second file'));
    w.world.server.files.resetUploadAfter(64 * 1024);
    const r = await zot(['attach', parent, '--file', a, '--file', b, '--idempotency-key', 'reset-1']);
    expect(r.code).toBe(7);
    expect(r.env.ok).toBe('partial');
    expect(r.env.data.succeeded.map((f: { filename: string }) => f.filename)).toEqual(['note.txt']);
    const failed = r.env.data.failed[0];
    expect(failed).toMatchObject({ index: 0, file: a, code: 0, reason: 'network_error', trashed: true });
    expect(failed.message).toMatch(
      new RegExp(
        `^The upload of ${a} to the storage server failed \\((read |write )?E[A-Z]+\\); nothing was registered\\. The empty attachment item [A-Z0-9]{8} was moved to the trash\\.$`,
      ),
    );
    const storage = logOf('POST', /^\/storage\/upload\//);
    expect(storage.map((e) => [e.status, e.fault])).toEqual([
      [0, 'reset'],
      [201, undefined],
    ]);
    // The server took no more than the reset point (plus what was in flight), and stored nothing for it.
    expect(w.world.server.files.bytesReceived).toBeLessThan(big.length);
    const trashedItem = attachments().find((i) => i.filename === 'big.pdf')!;
    expect(trashedItem.deleted).toBe(true);
    expect(w.world.server.files.files.has(`${LIB}/${trashedItem.key}`)).toBe(false);

    // The same call again with the same idempotency key: only the failed file runs, on a new item.
    w.world.server.clearLog();
    const again = await zot(['attach', parent, '--file', a, '--file', b, '--idempotency-key', 'reset-1']);
    expect(again.code).toBe(0);
    expect(again.env.data.failed).toEqual([]);
    expect(
      again.env.data.succeeded.map((f: { filename: string; md5: string }) => [f.filename, f.md5]),
    ).toEqual([
      ['note.txt', md5(Buffer.from('a small second file'))],
      ['big.pdf', md5(big)],
    ]);
    expect(logOf('POST', /^\/users\/1\/items$/)).toHaveLength(1);
    expect(logOf('POST', /^\/storage\/upload\//).map((e) => e.status)).toEqual([201]);
    const live = attachments().filter((i) => !i.deleted);
    expect(live.map((i) => i.filename).sort()).toEqual(['big.pdf', 'note.txt']);
    expect(live.find((i) => i.filename === 'big.pdf')!.key).not.toBe(trashedItem.key);
    expect(attachments()).toHaveLength(3);
    expect(w.world.server.files.files.size).toBe(2);
  });

  it('the registration landed but its answer was lost: the item is read back, the file reported attached, not trashed', async () => {
    const proxy = await startDroppingProxy(w.world.server.url);
    try {
      // Once the bytes are on their way, the registration that follows loses its answer.
      w.world.server.faults.concurrentEdit({
        match: { method: 'POST', path: /^\/storage\/upload\// },
        apply: () => proxy.drop({ method: 'POST', path: /\/items\/[A-Z0-9]{8}\/file$/ }),
      });
      const r = await zot(['attach', parent, '--file', file('lost.pdf', PDF)], { ZOTERO_API_URL: proxy.url });
      expect(proxy.dropped).toHaveLength(1);
      expect(r.code).toBe(0);
      const key = r.env.data.succeeded[0].key as string;
      expect(r.env.data.succeeded[0]).toMatchObject({ upload: 'uploaded', md5: md5(PDF) });
      expect(attachments()).toHaveLength(1);
      expect(attachments()[0]).toMatchObject({ key, md5: md5(PDF) });
      expect(attachments()[0]!.deleted).toBeFalsy();
      // One registration reached the server: the lost one was not sent again blindly.
      expect(logOf('POST', /\/file$/).map((e) => e.status)).toEqual([200, 204]);
    } finally {
      await proxy.close();
    }
  });

  it('a reset on the only file: nothing landed, its item trashed, exit 5', async () => {
    const big = Buffer.concat([PDF, Buffer.alloc(200_000, 9)]);
    w.world.server.files.resetUploadAfter(1024);
    const r = await zot(['attach', parent, '--file', file('only.pdf', big)]);
    expect(r.code).toBe(5);
    expect(r.env.error).toMatchObject({ code: 'network_error' });
    expect(r.env.error.failed![0]).toMatchObject({ reason: 'network_error', trashed: true });
    expect(attachments().map((i) => i.deleted)).toEqual([true]);
    expect(w.world.server.files.files.size).toBe(0);
  });
});

describe('zotero_attach_file over MCP', () => {
  it('content_base64 with filename attaches the bytes; over 7 MB is refused before any request', async () => {
    const mcp = await mcpOf(w);
    try {
      const made = await mcp.call('zotero_attach_file', {
        parent_item: parent,
        content_base64: PDF.toString('base64'),
        filename: 'inline.pdf',
      });
      expect(made.isError).toBeFalsy();
      const out = made.structuredContent as { succeeded: Array<{ md5: string; contentType: string }> };
      expect(out.succeeded[0]).toMatchObject({ md5: md5(PDF), contentType: 'application/pdf' });
      w.world.server.clearLog();
      const big = (await mcp.call('zotero_attach_file', {
        parent_item: parent,
        content_base64: Buffer.alloc(7 * 1024 * 1024 + 1).toString('base64'),
        filename: 'big.bin',
      })) as CallToolResult;
      expect(big.isError).toBe(true);
      expect(JSON.stringify(big.content)).toContain('at most 7340032 (7 MB)');
      expect(logOf('POST', /./)).toHaveLength(0);
    } finally {
      await mcp.close();
    }
  });

  // path on a shared deployment: refused by the pipeline, for every path input (test/tools/server-paths.test.ts).
});
