/**
 * zotero_attachment_audit on a desktop data directory (zotero.sqlite + storage/): stored files
 * missing here, missing in the cloud, MD5 differing (hashed only when the mtime is not Zotero's),
 * items without a PDF, bounded lists with whole counts; `zot attachment audit` in process.
 */
import { createHash } from 'node:crypto';
import { truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deps } from '../../../src/core/tool.js';
import { runCli } from '../../../src/surfaces/cli/main.js';
import tool from '../../../src/tools/attachments/audit.js';
import { groups, tools } from '../../../src/tools/index.js';
import { startDesktopWorld, USER_ID, type DesktopWorld } from '../../core/library/router-world.js';
import type { BuildSpec } from '../../support/zotero-sqlite/index.js';
import { storageFile } from '../fulltext/world.js';

const md5 = (b: string) => createHash('md5').update(b).digest('hex');
const MTIME = 1_700_000_000_000;
const pdf = (key: string, filename: string, extra: { md5?: string; mtime?: number } = {}) => ({
  key,
  title: 'Full Text PDF',
  contentType: 'application/pdf',
  filename,
  linkMode: 'imported_file' as const,
  ...extra,
});

const SPEC: BuildSpec = {
  user: { userID: USER_ID, username: 'sample-user' },
  libraries: [
    {
      type: 'user',
      items: [
        // In sync: the file has Zotero's mtime (not hashed).
        {
          key: 'SYNC2345',
          itemType: 'journalArticle',
          fields: { title: 'In sync' },
          attachments: [pdf('SYPD2345', 'a.pdf', { md5: md5('A'), mtime: MTIME })],
        },
        // Edited here after the sync: another mtime, another MD5.
        {
          key: 'EDIT2345',
          itemType: 'journalArticle',
          fields: { title: 'Edited' },
          attachments: [pdf('EDPD2345', 'b.pdf', { md5: md5('B'), mtime: MTIME })],
        },
        // Synced, never downloaded here.
        {
          key: 'GONE2345',
          itemType: 'journalArticle',
          fields: { title: 'Cloud only' },
          attachments: [pdf('GNPD2345', 'c.pdf', { md5: md5('C') })],
        },
        // Here, never synced.
        {
          key: 'LCAL2345',
          itemType: 'journalArticle',
          fields: { title: 'Local only' },
          attachments: [pdf('LCPD2345', 'd.pdf')],
        },
        // A snapshot and a link: no PDF.
        {
          key: 'SNAP2345',
          itemType: 'webpage',
          fields: { title: 'Only a snapshot' },
          attachments: [
            {
              key: 'SNHT2345',
              title: 'Snapshot',
              contentType: 'text/html',
              filename: 's.html',
              linkMode: 'imported_url',
              md5: md5('S'),
              mtime: MTIME,
            },
            { key: 'SNLK2345', title: 'Link', linkMode: 'linked_url', url: 'https://example.org' },
          ],
        },
        { key: 'BARE2345', itemType: 'book', fields: { title: 'No files' } },
      ],
    },
  ],
};

let world: DesktopWorld;
let deps: Deps;
beforeAll(async () => {
  world = await startDesktopWorld({ spec: SPEC });
  const at = (path: string) => utimesSync(path, MTIME / 1000, MTIME / 1000);
  at(storageFile(world.dataDir, 'SYPD2345', 'a.pdf', 'A'));
  storageFile(world.dataDir, 'EDPD2345', 'b.pdf', 'B, edited');
  storageFile(world.dataDir, 'LCPD2345', 'd.pdf', 'D');
  at(storageFile(world.dataDir, 'SNHT2345', 's.html', 'S'));
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
const keys = (list: Array<{ key: string }>) => list.map((e) => e.key).sort();

describe('zotero_attachment_audit', () => {
  it('finds each kind of problem, with whole counts', async () => {
    const out = await call({});
    expect(out).toMatchObject({ backend: 'sqlite', attachments: 6, storedFiles: 5 });
    expect(out.counts).toEqual({ missingLocally: 1, missingInCloud: 1, md5Differs: 1, itemsWithoutPdf: 2 });
    expect(keys(out.missingLocally)).toEqual(['GNPD2345']);
    expect(keys(out.missingInCloud)).toEqual(['LCPD2345']);
    expect(out.md5Differs).toEqual([
      {
        key: 'EDPD2345',
        parentItem: 'EDIT2345',
        filename: 'b.pdf',
        contentType: 'application/pdf',
        md5: md5('B'),
        localMd5: md5('B, edited'),
      },
    ]);
    expect(keys(out.itemsWithoutPdf)).toEqual(['BARE2345', 'SNAP2345']);
    // Only the file whose mtime is not Zotero's was hashed.
    expect(out.hashed).toBe(1);
    expect(out.truncated).toBeUndefined();
    expect(tool.summarize!(out, {})).toBe(
      '5 stored files: 1 missing here, 1 missing in the cloud, 1 with a different MD5; 2 items without a PDF.',
    );
  });

  it('limit cuts each list, never the counts', async () => {
    const out = await call({ limit: 1 });
    expect(out.itemsWithoutPdf).toHaveLength(1);
    expect(out.counts.itemsWithoutPdf).toBe(2);
    expect(out.truncated).toBe(true);
    expect(out.message).toBe(
      'The lists hold their first entries (at most 1 each, and about 40 KB in all); counts has the whole numbers.',
    );
  });

  it('zot attachment audit answers the same envelope', async () => {
    let stdout = '';
    const sink = Object.assign(
      new Writable({
        write(chunk, _e, done) {
          stdout += String(chunk);
          done();
        },
      }),
      { isTTY: false, columns: 100 },
    );
    const stdin = Object.assign(new PassThrough(), { isTTY: false });
    stdin.end('');
    const code = await runCli({
      argv: ['attachment', 'audit'],
      env: world.env(),
      io: { stdout: sink, stderr: sink, stdin },
      tools,
      groups,
    });
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as { data: Out }).data.counts).toEqual({
      missingLocally: 1,
      missingInCloud: 1,
      md5Differs: 1,
      itemsWithoutPdf: 2,
    });
  });

  it('hashes an edited file past 2 GiB, streamed (a whole-file read stops at 2 GiB)', async () => {
    // Sparse: 2 GiB + 1 of zeros, taking no disk space.
    const path = storageFile(world.dataDir, 'EDPD2345', 'b.pdf', '');
    const size = 2 ** 31 + 1;
    // `head -c 2147483649 /dev/zero | md5sum`
    const ZEROS_MD5 = '97cdd4bb45c3d5d652c0079901fb4eec';
    truncateSync(path, size);
    try {
      const out = await call({});
      expect(out.counts.md5Differs).toBe(1);
      expect(out.md5Differs[0]).toMatchObject({
        key: 'EDPD2345',
        md5: md5('B'),
        localMd5: ZEROS_MD5,
      });
      expect(out.hashed).toBe(1);
    } finally {
      writeFileSync(path, 'B, edited');
    }
  }, 120_000);
});

describe('zotero_attachment_audit on the desktop through its local API', () => {
  let desktop: DesktopWorld;
  let onLocalApi: Deps;
  beforeAll(async () => {
    desktop = await startDesktopWorld({ spec: SPEC, localApi: true });
    const at = (path: string) => utimesSync(path, MTIME / 1000, MTIME / 1000);
    at(storageFile(desktop.dataDir, 'SYPD2345', 'a.pdf', 'A'));
    storageFile(desktop.dataDir, 'EDPD2345', 'b.pdf', 'B, edited');
    storageFile(desktop.dataDir, 'LCPD2345', 'd.pdf', 'D');
    at(storageFile(desktop.dataDir, 'SNHT2345', 's.html', 'S'));
    onLocalApi = desktop.deps();
  });
  afterAll(async () => {
    await onLocalApi?.services.close();
    await desktop?.close();
  });

  it('reads the attachments from the local API, the files from storage/: the same findings as from zotero.sqlite', async () => {
    const out = await tool.run(tool.input.parse({}), onLocalApi);
    expect(tool.output.safeParse(out).success).toBe(true);
    expect(out).toMatchObject({
      backend: 'localApi',
      attachments: 6,
      storedFiles: 5,
      dataDir: desktop.dataDir,
    });
    expect(out.counts).toEqual({ missingLocally: 1, missingInCloud: 1, md5Differs: 1, itemsWithoutPdf: 2 });
    expect(keys(out.missingLocally)).toEqual(['GNPD2345']);
    expect(keys(out.missingInCloud)).toEqual(['LCPD2345']);
    expect(out.md5Differs).toEqual([
      {
        key: 'EDPD2345',
        parentItem: 'EDIT2345',
        filename: 'b.pdf',
        contentType: 'application/pdf',
        md5: md5('B'),
        localMd5: md5('B, edited'),
      },
    ]);
    expect(keys(out.itemsWithoutPdf)).toEqual(['BARE2345', 'SNAP2345']);
    expect(out.hashed).toBe(1);
    // The local API answered: nothing was asked of the Web API.
    expect(desktop.server.log.filter((e) => !e.path.startsWith('/api/'))).toEqual([]);
  });
});
