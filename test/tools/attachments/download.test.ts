/**
 * `zot attachment get KEY` / `zotero_get_attachment` for a file that is only in Zotero's cloud
 * storage, against the test server's download route (`GET …/items/K/file` → 302 to a storage
 * host on another port): the bytes streamed and saved byte for byte with their MD5 checked, no
 * key or Zotero header sent to the storage host, a damaged copy refused and not kept, the save
 * rules, not_found, text as text; over MCP a binary file as a resource link that
 * `resources/read` serves as a blob within its bound. The CLI runs in process.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_RESOURCE_BYTES } from '../../../src/core/attachments/download.js';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { groups, tools } from '../../../src/tools/index.js';
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

const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');
/** 300 KB: many chunks on the wire, over the resource bound. */
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(300 * 1024)]);
const SMALL = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(2_000)]);
const NOTES = 'Field notes from the glacier.\n'.repeat(40);

async function zot(argv: string[]) {
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
    env: w.env(),
    io: { stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), stdin },
    tools,
    groups,
  });
  const env = JSON.parse(stdout) as {
    ok: boolean;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read the envelope loosely
    data: Record<string, any>;
    error: { code: string; message: string; hint?: string; retryable: boolean };
  };
  return { code, env, stderr };
}

/** An attachment item of `parent` whose file is in the cloud (`bytes`, or a wrong recorded md5). */
function cloudFile(
  bytes: Buffer,
  o: { filename?: string; contentType?: string; md5?: string; stored?: boolean } = {},
): string {
  const lib = w.world.server.library(LIB);
  const [key] = lib.addItems([
    {
      itemType: 'attachment',
      parentItem: parent,
      linkMode: 'imported_file',
      title: 'Full Text',
      filename: o.filename ?? 'paper.pdf',
      contentType: o.contentType ?? 'application/pdf',
      ...(o.stored === false ? { md5: o.md5 ?? md5(bytes), mtime: 1_700_000_000_000 } : {}),
    },
  ]) as [string];
  if (o.stored !== false) w.world.server.downloads.putFile(LIB, key, bytes, o.md5 ? { md5: o.md5 } : {});
  return key;
}

const storageRequests = () => w.world.server.log.filter((e) => e.path.startsWith('/storage/download/'));
const fileRequests = (key: string) =>
  w.world.server.log.filter((e) => e.method === 'GET' && e.path === `/${LIB}/items/${key}/file`);

describe('zot attachment get: a file only in the cloud', () => {
  it('--save downloads it byte for byte, MD5 checked, source cloud; the storage host gets no key and no Zotero header', async () => {
    const key = cloudFile(PDF);
    const target = join(w.world.box.dir, 'out', 'paper.pdf');
    const r = await zot(['attachment', 'get', key, '--save', target]);
    expect(r.code).toBe(0);
    expect(r.env.data).toMatchObject({
      action: 'get',
      backend: 'web',
      library: LIB,
      saved: { path: target, bytes: PDF.length },
      file: {
        key,
        source: 'cloud',
        path: `${LIB}/items/${key}/file`,
        size: PDF.length,
        md5: md5(PDF),
        expectedMd5: md5(PDF),
        md5Matches: true,
      },
    });
    expect(readFileSync(target).equals(PDF)).toBe(true);

    const [api] = fileRequests(key);
    expect(api).toMatchObject({ status: 302 });
    expect(api!.headers['zotero-api-key']).toBeDefined();
    const [storage] = storageRequests();
    expect(storage).toMatchObject({ method: 'GET', status: 200 });
    expect(new URL(w.world.server.downloads.url).port).not.toBe(new URL(w.world.server.url).port);
    const sent = Object.keys(storage!.headers);
    expect(sent.filter((h) => /^(zotero-|authorization|cookie|if-)/.test(h))).toEqual([]);
    expect(JSON.stringify(storage!.headers)).not.toContain(w.world.server.log[0]!.headers['zotero-api-key']);
  });

  it('a file uploaded with zot attach comes back byte for byte', async () => {
    const source = join(w.world.box.dir, 'upload.pdf');
    writeFileSync(source, PDF);
    const up = await zot(['attach', parent, '--file', source]);
    expect(up.code).toBe(0);
    const key = up.env.data.succeeded[0].key as string;
    const target = join(w.world.box.dir, 'roundtrip.pdf');
    const r = await zot(['attachment', 'get', key, '--save', target]);
    expect(r.code).toBe(0);
    expect(r.env.data.file).toMatchObject({ source: 'cloud', md5Matches: true, size: PDF.length });
    expect(readFileSync(target).equals(PDF)).toBe(true);
  });

  it('a download whose MD5 is not Zotero’s is an error, and nothing is left at the save path', async () => {
    const key = cloudFile(PDF, { md5: md5('another file') });
    const dir = join(w.world.box.dir, 'damaged');
    const target = join(dir, 'paper.pdf');
    const r = await zot(['attachment', 'get', key, '--save', target]);
    expect(r.code).toBe(1);
    expect(r.env.error.code).toBe('api_error');
    expect(r.env.error.message).toBe(
      `The file of attachment '${key}' downloaded from Zotero’s cloud storage has MD5 ${md5(PDF)}, but Zotero recorded ${md5('another file')}: the copy is damaged or is not the one Zotero describes, so nothing was saved.`,
    );
    expect(existsSync(target)).toBe(false);
    // No temporary file left behind either.
    expect(readdirSync(dir)).toEqual([]);
    expect(storageRequests()).toHaveLength(1);
  });

  it('save rules: an existing file is refused before anything is downloaded; --overwrite replaces it', async () => {
    const key = cloudFile(PDF);
    const target = join(w.world.box.dir, 'taken.pdf');
    writeFileSync(target, 'someone else’s file');
    const refused = await zot(['attachment', 'get', key, '--save', target]);
    expect(refused.code).toBe(6);
    expect(refused.env.error).toMatchObject({
      code: 'conflict',
      message: `${target} already exists; it was left untouched.`,
    });
    expect(readFileSync(target, 'utf8')).toBe('someone else’s file');
    expect(fileRequests(key)).toHaveLength(0);
    expect(storageRequests()).toHaveLength(0);
    const replaced = await zot(['attachment', 'get', key, '--save', target, '--overwrite']);
    expect(replaced.code).toBe(0);
    expect(readFileSync(target).equals(PDF)).toBe(true);
  });

  it('not_found: Zotero records a file the cloud does not have; a file never stored anywhere', async () => {
    const missing = cloudFile(PDF, { stored: false });
    const r = await zot(['attachment', 'get', missing, '--save', join(w.world.box.dir, 'x.pdf')]);
    expect(r.code).toBe(4);
    expect(r.env.error.message).toBe(
      `The file of attachment '${missing}' is not in Zotero’s cloud storage (${LIB} has none for it), though Zotero recorded one.`,
    );
    expect(existsSync(join(w.world.box.dir, 'x.pdf'))).toBe(false);
    const [never] = w.world.server.library(LIB).addItems([
      {
        itemType: 'attachment',
        parentItem: parent,
        linkMode: 'imported_file',
        filename: 'n.pdf',
        contentType: 'application/pdf',
      },
    ]) as [string];
    const none = await zot(['attachment', 'get', never]);
    expect(none.code).toBe(4);
    expect(none.env.error.message).toBe(
      `The file of attachment '${never}' cannot be read: neither this computer nor Zotero’s cloud holds it.`,
    );
  });

  it('a reset at the storage host is retried from the API (a fresh link): the file still arrives whole', async () => {
    const key = cloudFile(PDF);
    w.world.server.faults.reset({ match: { path: /^\/storage\/download\// } });
    const target = join(w.world.box.dir, 'after-reset.pdf');
    const r = await zot(['attachment', 'get', key, '--save', target]);
    expect(r.code).toBe(0);
    expect(readFileSync(target).equals(PDF)).toBe(true);
    expect(fileRequests(key)).toHaveLength(2);
    expect(storageRequests().map((e) => e.fault ?? e.status)).toEqual(['reset', 200]);
  });

  it('a download that breaks off mid-file is a network_error, and nothing is left at the save path', async () => {
    const key = cloudFile(PDF);
    w.world.server.downloads.cutAfter(100_000);
    const dir = join(w.world.box.dir, 'cut');
    const target = join(dir, 'paper.pdf');
    const r = await zot(['attachment', 'get', key, '--save', target]);
    expect(r.code).toBe(5);
    expect(r.env.error).toMatchObject({
      code: 'network_error',
      retryable: true,
      message: `The download of GET /${LIB}/items/${key}/file broke off (ECONNRESET).`,
    });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a storage host that refuses the link is an error naming it, and nothing is saved', async () => {
    const key = cloudFile(PDF);
    w.world.server.faults.status({
      status: 403,
      body: 'Request has expired',
      match: { path: /^\/storage\/download\// },
    });
    const target = join(w.world.box.dir, 'expired.pdf');
    const r = await zot(['attachment', 'get', key, '--save', target]);
    expect(r.code).toBe(1);
    expect(r.env.error).toMatchObject({
      code: 'api_error',
      retryable: true,
      message: `The storage server that the Zotero API sent GET /${LIB}/items/${key}/file on to (${w.world.server.downloads.url}) answered HTTP 403: Request has expired.`,
    });
    expect(existsSync(target)).toBe(false);
  });

  it('a text file comes back as text, MD5 checked', async () => {
    const key = cloudFile(Buffer.from(NOTES), { filename: 'notes.txt', contentType: 'text/plain' });
    const r = await zot(['attachment', 'get', key]);
    expect(r.code).toBe(0);
    expect(r.env.data).toMatchObject({
      text: NOTES,
      totalChars: NOTES.length,
      file: { source: 'cloud', md5Matches: true, size: NOTES.length },
    });
  });

  it('a binary file without --save is not downloaded: the CLI says to use --save', async () => {
    const key = cloudFile(PDF);
    const r = await zot(['attachment', 'get', key]);
    expect(r.code).toBe(0);
    expect(r.env.data.message).toBe(
      'A binary file (application/pdf) in Zotero’s cloud storage is not returned as text: --save PATH downloads a copy (its MD5 checked).',
    );
    expect(r.env.data.file).toMatchObject({ source: 'cloud', size: null, md5: null });
    expect(fileRequests(key)).toHaveLength(0);
  });
});

describe('group libraries', () => {
  it('a group’s file downloads from groups/<id>, and its resource names the group', async () => {
    const lib = w.world.server.library('groups/10');
    const [item] = lib.addItems([{ title: 'Group paper' }]) as [string];
    const [key] = lib.addItems([
      {
        itemType: 'attachment',
        parentItem: item,
        linkMode: 'imported_file',
        filename: 'group.pdf',
        contentType: 'application/pdf',
      },
    ]) as [string];
    w.world.server.downloads.putFile('groups/10', key, SMALL);
    const target = join(w.world.box.dir, 'group.pdf');
    const r = await zot(['attachment', 'get', key, '--library-id', '10', '--save', target]);
    expect(r.code).toBe(0);
    expect(r.env.data).toMatchObject({
      library: 'groups/10',
      file: { source: 'cloud', path: `groups/10/items/${key}/file` },
    });
    expect(readFileSync(target).equals(SMALL)).toBe(true);
    const mcp = await mcpOf(w);
    try {
      const linked = await mcp.call('zotero_get_attachment', { item_key: key, library_id: 10 });
      expect(linked.content).toContainEqual(
        expect.objectContaining({ type: 'resource_link', uri: `zotero://attachments/groups/10/${key}` }),
      );
      const read = await mcp.client.readResource({ uri: `zotero://attachments/groups/10/${key}` });
      const [content] = read.contents as Array<{ blob: string }>;
      expect(Buffer.from(content!.blob, 'base64').equals(SMALL)).toBe(true);
      // A template variable may come percent-encoded (users%2F1) from a client that expands it.
      const encoded = await mcp.client.readResource({ uri: `zotero://attachments/groups%2F10/${key}` });
      expect((encoded.contents[0] as { blob: string }).blob).toBe(content!.blob);
    } finally {
      await mcp.close();
    }
  });
});

describe('MCP: a binary attachment as a resource', () => {
  it('zotero_get_attachment links it; resources/read serves it as a base64 blob with its MD5 checked', async () => {
    const key = cloudFile(SMALL);
    const mcp = await mcpOf(w);
    try {
      const result = await mcp.call('zotero_get_attachment', { item_key: key });
      expect(result.isError).toBeFalsy();
      expect(result.content[0]).toEqual({
        type: 'text',
        text: `Not downloaded: paper.pdf from Zotero’s cloud storage. A binary file (application/pdf) in Zotero’s cloud storage is not returned as text: save_path: PATH downloads a copy (its MD5 checked), and resources/read of zotero://attachments/${LIB}/${key} returns it when it is at most 75,000 bytes.`,
      });
      const uri = `zotero://attachments/${LIB}/${key}`;
      expect(result.content).toContainEqual({
        type: 'resource_link',
        uri,
        name: 'paper.pdf',
        mimeType: 'application/pdf',
      });
      expect((result.structuredContent as { message: string }).message).toContain(
        `resources/read of ${uri} returns it when it is at most 75,000 bytes`,
      );
      const { resourceTemplates } = await mcp.client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('zotero://attachments/{library}/{key}');

      const read = await mcp.client.readResource({ uri });
      expect(read.contents).toHaveLength(1);
      const [content] = read.contents as Array<{ uri: string; mimeType: string; blob: string }>;
      expect(content).toMatchObject({ uri, mimeType: 'application/pdf' });
      expect(Buffer.from(content!.blob, 'base64').equals(SMALL)).toBe(true);
      // The storage host again got nothing of Zotero's.
      for (const e of storageRequests())
        expect(Object.keys(e.headers).filter((h) => h.startsWith('zotero-'))).toEqual([]);
    } finally {
      await mcp.close();
    }
  });

  it('a file over the bound is refused with its size and how to save it; a damaged copy is refused', async () => {
    const big = cloudFile(PDF);
    const damaged = cloudFile(SMALL, { md5: md5('other') });
    const mcp = await mcpOf(w);
    try {
      const error = (await mcp.client
        .readResource({ uri: `zotero://attachments/${LIB}/${big}` })
        .catch((e: unknown) => e)) as Error;
      expect(error.message).toContain(
        `validation_error: The file of attachment '${big}' is ${PDF.length.toLocaleString('en-US')} bytes, more than a resource embeds (${MAX_RESOURCE_BYTES.toLocaleString('en-US')} bytes).`,
      );
      expect(error.message).toContain(`zotero_get_attachment`);
      expect(error.message).toContain('save_path');
      const bad = (await mcp.client
        .readResource({ uri: `zotero://attachments/${LIB}/${damaged}` })
        .catch((e: unknown) => e)) as Error;
      expect(bad.message).toContain(
        `api_error: The file of attachment '${damaged}' downloaded from Zotero’s cloud storage has MD5`,
      );
      const none = (await mcp.client
        .readResource({ uri: `zotero://attachments/${LIB}/NONE2345` })
        .catch((e: unknown) => e)) as Error;
      expect(none.message).toContain('not_found');
    } finally {
      await mcp.close();
    }
  });
});
