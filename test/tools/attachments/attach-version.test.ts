/**
 * `zot attach ATTACHMENT_KEY --file PATH`: when `parent_item` is itself a stored-file attachment,
 * its one file is uploaded as a new version of it (`If-Match` with the stored md5), against the
 * test server's upload protocol: no item created, the filename/title brought in line, the same
 * bytes answered `exists` with nothing sent, a `412` (another version stored meanwhile) reported
 * and never overwritten, and on any failure the previous version kept (nothing trashed).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attachFiles } from '../../../src/core/attachments/upload.js';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { groups, tools } from '../../../src/tools/index.js';
import { LIB, mcpOf, startItemsWorld, type ItemsWorld } from '../items/setup.js';

const OLD = Buffer.from('%PDF-1.4\n% the first version\n%%EOF\n');
const NEW = Buffer.from('%PDF-1.4\n% the second version, with corrections\n%%EOF\n');
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

let w: ItemsWorld;
let parent: string;
let att: string;
beforeEach(async () => {
  w = await startItemsWorld();
  const lib = w.world.server.library(LIB);
  [parent] = lib.addItems([{ title: 'Parent' }]) as [string];
  att = seedAttachment('paper.pdf');
});
afterEach(async () => {
  await w.close();
});

/** An imported_file attachment of `parent` whose stored file is OLD, titled `title`. */
function seedAttachment(filename: string, title = filename, linkMode = 'imported_file'): string {
  const lib = w.world.server.library(LIB);
  const [key] = lib.addItems([
    { itemType: 'attachment', parentItem: parent, linkMode, title, filename, contentType: 'application/pdf' },
  ]) as [string];
  if (linkMode.startsWith('imported')) {
    w.world.server.files.seedFile(lib, key, {
      md5: md5(OLD),
      filename,
      size: OLD.length,
      mtime: 1_600_000_000_000,
      contentType: 'application/pdf',
    });
  }
  return key;
}

async function zot(argv: string[]) {
  let stdout = '';
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
    io: { stdout: sink((s) => (stdout += s)), stderr: sink(() => {}), stdin },
    tools,
    groups,
  });
  const env = JSON.parse(stdout) as {
    ok: boolean | 'partial';
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read the envelope loosely
    data: Record<string, any>;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
    error: { code: string; message: string; field?: string; failed?: any[] };
  };
  return { code, env };
}

function file(name: string, bytes: Buffer): string {
  const path = join(w.world.box.dir, name);
  writeFileSync(path, bytes);
  return path;
}

const item = (key: string) => w.world.server.library(LIB).items.get(key)!;
const attachments = () =>
  [...w.world.server.library(LIB).items.values()].filter((i) => i.itemType === 'attachment');
const logOf = (method: string, path: RegExp) =>
  w.world.server.log.filter((e) => e.method === method && path.test(e.path));
/** Requests that change something: every POST, PATCH, PUT and DELETE, the storage upload included. */
const writes = () => w.world.server.log.filter((e) => e.method !== 'GET' && e.method !== 'HEAD');

describe('zot attach ATTACHMENT_KEY --file: a new version of a stored file', () => {
  it('uploads with If-Match on the old md5, registers, renames, creates no item, reads the md5 back', async () => {
    const path = file('paper-v2.pdf', NEW);
    w.world.server.clearLog();
    const r = await zot(['attach', att, '--file', path]);
    expect(r.code).toBe(0);
    expect(r.env.data).toMatchObject({
      parentItem: att,
      failed: [],
      succeeded: [
        {
          key: att,
          file: path,
          filename: 'paper-v2.pdf',
          // The title was the old file name: it follows the new one.
          title: 'paper-v2.pdf',
          md5: md5(NEW),
          size: NEW.length,
          upload: 'uploaded',
        },
      ],
    });
    // No item created, nothing trashed: the one attachment now holds the new bytes.
    expect(logOf('POST', /^\/users\/1\/items$/)).toHaveLength(0);
    expect(attachments()).toHaveLength(1);
    expect(item(att)).toMatchObject({ md5: md5(NEW), filename: 'paper-v2.pdf', title: 'paper-v2.pdf' });
    expect(item(att).deleted).toBeFalsy();
    expect(w.world.server.files.files.get(`${LIB}/${att}`)).toMatchObject({
      md5: md5(NEW),
      size: NEW.length,
    });

    const fileCalls = logOf('POST', new RegExp(`/items/${att}/file$`));
    expect(fileCalls.map((e) => [e.headers['if-match'], e.headers['if-none-match'], e.status])).toEqual([
      [md5(OLD), undefined, 200],
      [md5(OLD), undefined, 204],
    ]);
    expect(Object.fromEntries(new URLSearchParams(String(fileCalls[0]!.body)))).toMatchObject({
      md5: md5(NEW),
      filename: 'paper-v2.pdf',
      filesize: String(NEW.length),
    });
    expect(logOf('POST', /^\/storage\/upload\//).map((e) => e.status)).toEqual([201]);
    // The title (the old file name) followed in one PATCH.
    expect(logOf('PATCH', new RegExp(`/items/${att}$`)).map((e) => e.body)).toEqual([
      { title: 'paper-v2.pdf' },
    ]);
    expect(r.env.data.libraryVersion).toBe(w.world.server.library(LIB).version);
  });

  it('a title of its own stays; --title replaces it; the core output says version new and the md5 replaced', async () => {
    const own = seedAttachment('draft.pdf', 'Annotated copy');
    const kept = await zot(['attach', own, '--file', file('draft-v2.pdf', NEW)]);
    expect(kept.code).toBe(0);
    expect(item(own)).toMatchObject({ title: 'Annotated copy', filename: 'draft-v2.pdf', md5: md5(NEW) });

    const third = Buffer.from('%PDF-1.4\n% third\n%%EOF\n');
    const out = await attachFiles(w.deps(), {
      parent_item: own,
      path: [file('draft-v3.pdf', third)],
      title: 'Final copy',
    });
    expect(out).toMatchObject({
      parentItem: own,
      failed: [],
      succeeded: [
        {
          key: own,
          title: 'Final copy',
          filename: 'draft-v3.pdf',
          md5: md5(third),
          upload: 'uploaded',
          version: 'new',
          previousMd5: md5(NEW),
        },
      ],
    });
    expect(item(own)).toMatchObject({ title: 'Final copy', md5: md5(third) });
    expect(attachments()).toHaveLength(2);
  });

  it('the same bytes as stored: exists, nothing sent at all', async () => {
    const path = file('paper.pdf', OLD);
    const before = w.world.server.library(LIB).version;
    w.world.server.clearLog();
    const r = await zot(['attach', att, '--file', path]);
    expect(r.code).toBe(0);
    expect(r.env.data.succeeded).toEqual([
      expect.objectContaining({ key: att, upload: 'exists', md5: md5(OLD), filename: 'paper.pdf' }),
    ]);
    expect(r.env.data.libraryVersion).toBeUndefined();
    expect(writes()).toEqual([]);
    expect(w.world.server.library(LIB).version).toBe(before);
  });

  it('more than one file for an attachment is a validation_error naming its parent, before anything is sent', async () => {
    w.world.server.clearLog();
    const r = await zot(['attach', att, '--file', file('a.pdf', NEW), '--file', file('b.pdf', OLD)]);
    expect(r.code).toBe(3);
    expect(r.env.error).toMatchObject({
      code: 'validation_error',
      field: 'path',
      message: `${att} is an attachment, so the file becomes a new version of it: give exactly one file, not 2. To add files beside it, attach them to its parent item ${parent}.`,
    });
    expect(writes()).toEqual([]);
  });

  it('a linked URL has no file to replace: validation_error, nothing sent', async () => {
    const link = seedAttachment('', 'A web page', 'linked_url');
    w.world.server.clearLog();
    const r = await zot(['attach', link, '--file', file('page.pdf', NEW)]);
    expect(r.env.error).toMatchObject({ code: 'validation_error', field: 'parent_item' });
    expect(r.env.error.message).toContain(`${link} is a link to a web page (it has no file)`);
    expect(writes()).toEqual([]);
  });

  it('a parent that does not exist is not_found, a note is refused: nothing created, nothing sent', async () => {
    w.world.server.clearLog();
    const missing = await zot(['attach', 'MISS2345', '--file', file('x.pdf', NEW)]);
    expect(missing.code).toBe(4);
    expect(missing.env.error).toMatchObject({
      code: 'not_found',
      message: 'The parent item MISS2345 does not exist in library users/1: nothing was attached.',
    });
    const [note] = w.world.server.library(LIB).addItems([{ itemType: 'note', note: '<p>A note</p>' }]) as [
      string,
    ];
    const onNote = await zot(['attach', note, '--file', file('y.pdf', NEW)]);
    expect(onNote.code).toBe(3);
    expect(onNote.env.error.message).toBe(
      `${note} is a note: files are attached to a regular item, or uploaded as a new version of a stored-file attachment.`,
    );
    expect(writes()).toEqual([]);
    expect(attachments()).toHaveLength(1);
  });

  it('an attachment in the trash is refused before anything is sent', async () => {
    w.world.server.library(LIB).editItem(att, { deleted: true });
    w.world.server.clearLog();
    const r = await zot(['attach', att, '--file', file('paper-v2.pdf', NEW)]);
    expect(r.code).toBe(3);
    expect(r.env.error).toMatchObject({
      code: 'validation_error',
      field: 'parent_item',
      message: `The attachment ${att} is in the trash: restore it before uploading a new version of its file.`,
    });
    expect(writes()).toEqual([]);
    expect(item(att)).toMatchObject({ md5: md5(OLD) });
  });

  it('412 at the authorization (another version stored meanwhile): re-read, reported as conflict, not overwritten', async () => {
    const other = Buffer.from('%PDF-1.4\n% someone else’s version\n%%EOF\n');
    w.world.server.faults.concurrentEdit({
      match: { method: 'POST', path: new RegExp(`/items/${att}/file$`) },
      apply: (server) =>
        server.files.seedFile(server.library(LIB), att, {
          md5: md5(other),
          filename: 'paper.pdf',
          size: other.length,
          mtime: 1_700_000_000_000,
          contentType: 'application/pdf',
        }),
    });
    w.world.server.clearLog();
    const r = await zot(['attach', att, '--file', file('paper-v2.pdf', NEW)]);
    expect(r.code).toBe(6);
    expect(r.env.error.failed).toEqual([
      expect.objectContaining({ index: 0, key: att, code: 412, reason: 'conflict' }),
    ]);
    const message = r.env.error.failed![0].message as string;
    expect(message).toContain(
      `The file of attachment ${att} changed while ${join(w.world.box.dir, 'paper-v2.pdf')} was being attached: it now has a file with md5 ${md5(other)}, where it had the version with md5 ${md5(OLD)} that this upload was to replace`,
    );
    expect(message).toContain('That version was not overwritten; nothing was sent.');
    expect(logOf('POST', new RegExp(`/items/${att}/file$`)).map((e) => e.status)).toEqual([412]);
    expect(logOf('POST', /^\/storage\/upload\//)).toHaveLength(0);
    expect(logOf('PATCH', /./)).toHaveLength(0);
    expect(item(att)).toMatchObject({ md5: md5(other) });
    expect(item(att).deleted).toBeFalsy();
    expect(w.world.server.files.files.get(`${LIB}/${att}`)?.md5).toBe(md5(other));
  });

  it('412 at the registration (stored while the bytes were on their way): the bytes sent are not registered', async () => {
    const other = Buffer.from('%PDF-1.4\n% stored during the upload\n%%EOF\n');
    w.world.server.faults.concurrentEdit({
      match: { method: 'POST', path: /^\/storage\/upload\// },
      apply: (server) =>
        server.files.seedFile(server.library(LIB), att, {
          md5: md5(other),
          filename: 'paper.pdf',
          size: other.length,
          mtime: 1_700_000_000_000,
          contentType: 'application/pdf',
        }),
    });
    w.world.server.clearLog();
    const r = await zot(['attach', att, '--file', file('paper-v2.pdf', NEW)]);
    expect(r.env.error.failed![0]).toMatchObject({ key: att, code: 412, reason: 'conflict' });
    expect(r.env.error.failed![0].message).toContain(
      'That version was not overwritten; the bytes sent were not registered.',
    );
    expect(logOf('POST', new RegExp(`/items/${att}/file$`)).map((e) => e.status)).toEqual([200, 412]);
    expect(w.world.server.files.files.get(`${LIB}/${att}`)?.md5).toBe(md5(other));
    expect(item(att).deleted).toBeFalsy();
  });

  it('a failed registration keeps the previous version: reported with the key, nothing trashed', async () => {
    w.world.server.files.failRegistration();
    const r = await zot(['attach', att, '--file', file('paper-v2.pdf', NEW)]);
    expect(r.code).not.toBe(0);
    const failed = r.env.error.failed![0];
    expect(failed).toMatchObject({ key: att, code: 400 });
    expect(failed.trashed).toBeUndefined();
    expect(failed.message).toBe(
      `The file reached the storage server but Zotero did not register it: The Zotero API answered HTTP 400 to POST /users/1/items/${att}/file: Remote file not found. The attachment ${att} keeps its previous version (md5 ${md5(OLD)}); nothing was trashed.`,
    );
    expect(item(att)).toMatchObject({ md5: md5(OLD), filename: 'paper.pdf', title: 'paper.pdf' });
    expect(item(att).deleted).toBeFalsy();
    expect(logOf('PATCH', /./)).toHaveLength(0);
  });

  it('a connection reset mid-upload keeps the previous version; a second run uploads it once', async () => {
    const big = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(300_000, 3)]);
    const path = file('paper-v2.pdf', big);
    w.world.server.files.resetUploadAfter(64 * 1024);
    const r = await zot(['attach', att, '--file', path]);
    const failed = r.env.error.failed![0];
    expect(failed).toMatchObject({ key: att, code: 0, reason: 'network_error' });
    expect(failed.message).toContain(`The upload of ${path} to the storage server failed (`);
    expect(failed.message).toContain(
      `nothing was registered. The attachment ${att} keeps its previous version (md5 ${md5(OLD)}); nothing was trashed.`,
    );
    expect(item(att)).toMatchObject({ md5: md5(OLD) });
    expect(item(att).deleted).toBeFalsy();

    w.world.server.clearLog();
    const again = await zot(['attach', att, '--file', path]);
    expect(again.code).toBe(0);
    expect(again.env.data.succeeded[0]).toMatchObject({ key: att, upload: 'uploaded', md5: md5(big) });
    expect(logOf('POST', /^\/storage\/upload\//).map((e) => e.status)).toEqual([201]);
    expect(attachments()).toHaveLength(1);
    expect(item(att)).toMatchObject({ md5: md5(big), filename: 'paper-v2.pdf' });
  });

  it('--dry-run says the file may become a new version of the attachment (offline: nothing read or sent)', async () => {
    w.world.server.clearLog();
    const one = await zot(['attach', att, '--file', file('v2.pdf', NEW), '--dry-run']);
    expect(one.code).toBe(0);
    expect(one.env.data.would.target).toBe(
      `A new attachment item under ${att}; or, if ${att} is itself a stored-file attachment, a new version of attachment ${att} (its previous file replaced, no item created). A dry run reads no library, so which one is decided when it runs.`,
    );
    const two = await zot([
      'attach',
      att,
      '--file',
      file('a.pdf', NEW),
      '--file',
      file('b.pdf', OLD),
      '--dry-run',
    ]);
    expect(two.env.data.would.target).toBe(
      `2 new attachment items under ${att} (refused if ${att} is itself an attachment: a new version of attachment ${att} takes exactly one file).`,
    );
    expect(w.world.server.log).toHaveLength(0);
  });

  it('an attachment with no file yet takes its first one with If-None-Match: *', async () => {
    const [empty] = w.world.server.library(LIB).addItems([
      {
        itemType: 'attachment',
        parentItem: parent,
        linkMode: 'imported_file',
        title: 'Missing',
        filename: 'missing.pdf',
        contentType: 'application/pdf',
      },
    ]) as [string];
    w.world.server.clearLog();
    const r = await zot(['attach', empty, '--file', file('missing.pdf', NEW)]);
    expect(r.code).toBe(0);
    expect(r.env.data.succeeded[0]).toMatchObject({ key: empty, upload: 'uploaded', title: 'Missing' });
    expect(
      logOf('POST', new RegExp(`/items/${empty}/file$`)).map((e) => [e.headers['if-none-match'], e.status]),
    ).toEqual([
      ['*', 200],
      ['*', 204],
    ]);
    expect(item(empty)).toMatchObject({ md5: md5(NEW) });
  });
});

describe('zotero_attach_file over MCP: a new version', () => {
  it('content_base64 with parent_item an attachment replaces its file; no item is created', async () => {
    const mcp = await mcpOf(w);
    try {
      const r = await mcp.call('zotero_attach_file', {
        parent_item: att,
        content_base64: NEW.toString('base64'),
        filename: 'inline-v2.pdf',
      });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({
        parentItem: att,
        failed: [],
        succeeded: [{ key: att, filename: 'inline-v2.pdf', md5: md5(NEW), upload: 'uploaded' }],
      });
      expect(attachments()).toHaveLength(1);
      expect(item(att)).toMatchObject({ md5: md5(NEW), filename: 'inline-v2.pdf' });
    } finally {
      await mcp.close();
    }
  });
});
