/**
 * zotero_get_attachment on a desktop data directory (zotero.sqlite + storage/): the list of an
 * item's attachments with where each file is, one file read from storage with its MD5 checked
 * (text as text, any file saved under the save rules), a file only in the cloud refused with
 * what to do; `zot attachment list|get` end to end, in process.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachmentBytes } from '../../../src/core/attachments/download.js';
import { ZoteusError } from '../../../src/core/errors.js';
import type { Deps } from '../../../src/core/tool.js';
import { runCli } from '../../../src/surfaces/cli/main.js';
import tool from '../../../src/tools/attachments/get-attachment.js';
import { groups, tools } from '../../../src/tools/index.js';
import { startDesktopWorld, USER_ID, type DesktopWorld } from '../../core/library/router-world.js';
import { makePdf, paperPages } from '../../support/documents/index.js';
import type { BuildSpec } from '../../support/zotero-sqlite/index.js';
import { storageFile } from '../fulltext/world.js';

const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');
const PDF = makePdf({ pages: paperPages(2) });
const NOTES = 'Field notes: 14 kilometres of retreat.\n'.repeat(30);
const CHANGED = 'the copy on this computer was edited after the sync';

const K = {
  paper: 'PAPR2345',
  pdf: 'PPDF2345',
  notes: 'NTXT2345',
  cloud: 'CLDX2345',
  link: 'LINK2345',
  edited: 'EDIT2345',
  bare: 'BARE2345',
  wide: 'WIDE2345',
} as const;
const WIDE = '氷河の後退。'.repeat(10_000);

const SPEC: BuildSpec = {
  user: { userID: USER_ID, username: 'sample-user' },
  libraries: [
    {
      type: 'user',
      items: [
        {
          key: K.paper,
          itemType: 'journalArticle',
          fields: { title: 'Glaciers' },
          attachments: [
            {
              key: K.pdf,
              title: 'Full Text PDF',
              contentType: 'application/pdf',
              filename: 'paper.pdf',
              linkMode: 'imported_file',
              md5: md5(PDF),
              mtime: 1_700_000_000_000,
            },
            {
              key: K.notes,
              title: 'Notes',
              contentType: 'text/plain',
              filename: 'notes.txt',
              linkMode: 'imported_file',
              md5: md5(NOTES),
            },
            {
              key: K.cloud,
              title: 'Supplement',
              contentType: 'application/pdf',
              filename: 'supplement.pdf',
              linkMode: 'imported_file',
              md5: 'a'.repeat(32),
            },
            { key: K.link, title: 'Publisher page', linkMode: 'linked_url', url: 'https://example.org/x' },
            {
              key: K.edited,
              title: 'Edited',
              contentType: 'text/plain',
              filename: 'edited.txt',
              linkMode: 'imported_file',
              md5: md5('the version Zotero synced'),
            },
          ],
        },
        {
          key: 'JPNX2345',
          itemType: 'report',
          fields: { title: 'Japanese notes' },
          attachments: [
            {
              key: K.wide,
              title: 'Notes',
              contentType: 'text/plain',
              filename: 'wide.txt',
              linkMode: 'imported_file',
            },
          ],
        },
        { key: K.bare, itemType: 'book', fields: { title: 'No files' } },
      ],
    },
  ],
};

let world: DesktopWorld;
let deps: Deps;
beforeAll(async () => {
  world = await startDesktopWorld({ spec: SPEC });
  storageFile(world.dataDir, K.pdf, 'paper.pdf', PDF);
  storageFile(world.dataDir, K.notes, 'notes.txt', NOTES);
  storageFile(world.dataDir, K.edited, 'edited.txt', CHANGED);
  storageFile(world.dataDir, K.wide, 'wide.txt', WIDE);
  deps = world.deps();
});
afterAll(async () => {
  await deps?.services.close();
  await world?.close();
});

type Out = Awaited<ReturnType<typeof tool.run>>;
async function call(input: Record<string, unknown>): Promise<Out> {
  const out = await tool.run(tool.input.parse(input), deps);
  expect(tool.output.safeParse(out).success).toBe(true);
  return out;
}
async function refusal(input: Record<string, unknown>): Promise<ZoteusError> {
  const error = await tool.run(tool.input.parse(input), deps).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ZoteusError);
  return error as ZoteusError;
}

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
    env: world.env(),
    io: { stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), stdin },
    tools,
    groups,
  });
  return { code, stdout, stderr };
}

describe('zotero_get_attachment: list', () => {
  it('lists every attachment with link mode, type, size, MD5 and where the file is', async () => {
    const out = await call({ item_key: K.paper });
    expect(out).toMatchObject({ action: 'list', itemKey: K.paper, backend: 'sqlite', totalResults: 5 });
    const byKey = Object.fromEntries(out.attachments!.map((a) => [a.key, a]));
    expect(byKey[K.pdf]).toEqual({
      key: K.pdf,
      title: 'Full Text PDF',
      linkMode: 'imported_file',
      contentType: 'application/pdf',
      filename: 'paper.pdf',
      size: PDF.byteLength,
      md5: md5(PDF),
      local: true,
      localPath: join(world.dataDir, 'storage', K.pdf, 'paper.pdf'),
      inCloud: true,
    });
    expect(byKey[K.cloud]).toMatchObject({ local: false, inCloud: true, size: null });
    expect(byKey[K.link]).toMatchObject({ linkMode: 'linked_url', local: false, inCloud: false });
    expect(tool.summarize!(out, tool.input.parse({ item_key: K.paper }))).toBe(
      `5 attachments of ${K.paper}: 3 on this computer, 1 only in the cloud.`,
    );
  });

  it('an item without attachments lists none; a key that names nothing is not_found', async () => {
    const out = await call({ item_key: K.bare });
    expect(out.attachments).toEqual([]);
    expect((await refusal({ item_key: 'NONE2345' })).code).toBe('not_found');
  });
});

describe('zotero_get_attachment: get', () => {
  it('an item key reads its PDF from storage, MD5 checked, not as text', async () => {
    const out = await call({ item_key: K.paper, action: 'get' });
    expect(out.file).toEqual({
      key: K.pdf,
      source: 'storage',
      path: join(world.dataDir, 'storage', K.pdf, 'paper.pdf'),
      size: PDF.byteLength,
      md5: md5(PDF),
      expectedMd5: md5(PDF),
      md5Matches: true,
    });
    expect(out.text).toBeUndefined();
    expect(out.message).toContain('save_path');
  });

  it('a binary file names its resource, which serves the bytes from storage within the bound', async () => {
    const out = await call({ item_key: K.pdf });
    expect(out.resource).toEqual({
      uri: `zotero://attachments/${out.library}/${K.pdf}`,
      name: 'paper.pdf',
      mimeType: 'application/pdf',
    });
    const file = await attachmentBytes(deps, out.library, K.pdf, PDF.byteLength);
    expect(file).toMatchObject({ key: K.pdf, mimeType: 'application/pdf', source: 'storage' });
    expect(file.bytes.equals(PDF)).toBe(true);
    const over = (await attachmentBytes(deps, out.library, K.pdf, PDF.byteLength - 1).catch(
      (e: unknown) => e,
    )) as ZoteusError;
    expect(over.code).toBe('validation_error');
    expect(over.message).toBe(
      `The file of attachment '${K.pdf}' is ${PDF.byteLength.toLocaleString('en-US')} bytes, more than a resource embeds (${(PDF.byteLength - 1).toLocaleString('en-US')} bytes).`,
    );
  });

  it('a text file comes back as text, bounded by max_chars, offset reads on', async () => {
    const first = await call({ item_key: K.notes, max_chars: 100 });
    expect(first).toMatchObject({ action: 'get', text: NOTES.slice(0, 100), start: 0, end: 100 });
    expect(first).toMatchObject({ totalChars: NOTES.length, truncated: true });
    const next = await call({ item_key: K.notes, max_chars: 100, offset: first.end });
    expect(next.text).toBe(NOTES.slice(100, 200));
  });

  it('a long text of multi-byte characters stops at the size bound, not only at max_chars', async () => {
    const out = await call({ item_key: K.wide, max_chars: 50_000 });
    expect(out.totalChars).toBe(WIDE.length);
    expect(out.end).toBeLessThan(50_000);
    expect(Buffer.byteLength(out.text!, 'utf8')).toBeLessThanOrEqual(40_000);
    expect(out.text).toBe(WIDE.slice(0, out.end));
    expect(out.truncated).toBe(true);
  });

  it('a file that differs from Zotero’s hash is read and said to differ', async () => {
    const out = await call({ item_key: K.edited });
    expect(out.file).toMatchObject({ md5: md5(CHANGED), md5Matches: false });
    expect(out.message).toContain('differs from the one Zotero recorded');
    expect(out.text).toBe(CHANGED);
  });

  it('save_path writes the bytes exactly, and refuses to replace a file without overwrite', async () => {
    const target = join(world.box.dir, 'out', 'paper-copy.pdf');
    const out = await call({ item_key: K.pdf, save_path: target });
    expect(out.saved).toEqual({ path: target, bytes: PDF.byteLength });
    expect(md5(readFileSync(target))).toBe(md5(PDF));
    writeFileSync(target, 'someone else’s file');
    expect((await refusal({ item_key: K.pdf, save_path: target })).code).toBe('conflict');
    expect(readFileSync(target, 'utf8')).toBe('someone else’s file');
    await call({ item_key: K.pdf, save_path: target, overwrite: true });
    expect(md5(readFileSync(target))).toBe(md5(PDF));
  });

  it('a file only in the cloud, a link and an item without files are not_found with the reason', async () => {
    const cloud = await refusal({ item_key: K.cloud });
    expect(cloud.code).toBe('not_found');
    expect(cloud.message).toBe(
      `The file of attachment '${K.cloud}' cannot be read: it is only in Zotero’s cloud storage, and no Zotero API key is configured to download it.`,
    );
    expect((await refusal({ item_key: K.link })).message).toBe(
      `Item '${K.link}' has no attachment with a file.`,
    );
    expect((await refusal({ item_key: K.bare, action: 'get' })).code).toBe('not_found');
  });
});

describe('zot attachment', () => {
  it('list prints the envelope; get --save saves; a cloud-only file exits 4', async () => {
    const list = await zot(['attachment', 'list', K.paper]);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    const data = (JSON.parse(list.stdout) as { data: Out }).data;
    expect(data.attachments!.map((a) => a.key)).toEqual([K.pdf, K.notes, K.cloud, K.link, K.edited]);
    const target = join(world.box.dir, 'cli-paper.pdf');
    const get = await zot(['attachment', 'get', K.pdf, '--save', target]);
    expect(get.code).toBe(0);
    expect((JSON.parse(get.stdout) as { data: Out }).data.saved).toEqual({
      path: target,
      bytes: PDF.byteLength,
    });
    expect(md5(readFileSync(target))).toBe(md5(PDF));
    const cloud = await zot(['attachment', 'get', K.cloud]);
    expect(cloud.code).toBe(4);
    expect((JSON.parse(cloud.stdout) as { error: { code: string } }).error.code).toBe('not_found');
  });
});
