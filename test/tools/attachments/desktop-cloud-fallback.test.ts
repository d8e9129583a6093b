/**
 * A desktop library (zotero.sqlite) with a Zotero API key, where an attachment's file was never
 * downloaded to this computer: `zot attachment get` lists it from the desktop's data, and reads
 * the file from Zotero's cloud storage instead (`file.source` cloud), checking the bytes against
 * the MD5 the desktop recorded. One scenario, in process.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY, startDesktopWorld, USER_ID, type DesktopWorld } from '../../core/library/router-world.js';
import type { BuildSpec } from '../../support/zotero-sqlite/index.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { storageFile } from '../fulltext/world.js';

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const LOCAL = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(4_000)]);
const CLOUD = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(200_000)]);
const DAMAGED = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(9_000)]);
const LIB = `users/${USER_ID}`;

const attachment = (key: string, filename: string, bytes: Buffer) => ({
  key,
  title: 'Full Text PDF',
  contentType: 'application/pdf',
  filename,
  linkMode: 'imported_file' as const,
  md5: md5(bytes),
  mtime: 1_700_000_000_000,
});
const SPEC: BuildSpec = {
  user: { userID: USER_ID, username: 'sample-user' },
  libraries: [
    {
      type: 'user',
      items: [
        {
          key: 'PAPR2345',
          itemType: 'journalArticle',
          fields: { title: 'Glaciers' },
          attachments: [
            attachment('HERE2345', 'here.pdf', LOCAL),
            attachment('CLDX2345', 'cloud.pdf', CLOUD),
            attachment('DMGD2345', 'damaged.pdf', DAMAGED),
          ],
        },
      ],
    },
  ],
};

let world: DesktopWorld;
beforeAll(async () => {
  world = await startDesktopWorld({ spec: SPEC });
  storageFile(world.dataDir, 'HERE2345', 'here.pdf', LOCAL);
  // In the cloud only; the third one's cloud copy is not the file the desktop recorded.
  world.server.downloads.putFile(LIB, 'CLDX2345', CLOUD);
  world.server.downloads.putFile(LIB, 'DMGD2345', randomBytes(9_009));
});
afterAll(async () => {
  await world?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Envelope = { ok: boolean; data: any; error: { code: string; message: string } };
async function zot(argv: string[]) {
  const r = await zotAt(argv, { env: world.env({ ZOTERO_API_KEY: KEY }) });
  return { code: r.code, env: r.json() as unknown as Envelope };
}

describe('a desktop library with a key, the file not on this computer', () => {
  it('lists from the desktop, downloads from the cloud (source cloud, MD5 checked); a damaged cloud copy is refused', async () => {
    const list = await zot(['attachment', 'list', 'PAPR2345']);
    expect(list.code).toBe(0);
    expect(list.env.data.backend).toBe('sqlite');

    // The local copy is read from storage/: nothing asked of the cloud.
    world.server.clearLog();
    const here = await zot(['attachment', 'get', 'HERE2345', '--save', join(world.box.dir, 'here.pdf')]);
    expect(here.code).toBe(0);
    expect(here.env.data.file).toMatchObject({ key: 'HERE2345', source: 'storage', md5: md5(LOCAL) });
    expect(world.server.log.filter((e) => e.path.endsWith('/file'))).toEqual([]);

    const target = join(world.box.dir, 'out', 'cloud.pdf');
    const r = await zot(['attachment', 'get', 'CLDX2345', '--save', target]);
    expect(r.code).toBe(0);
    expect(r.env.data).toMatchObject({
      backend: 'sqlite',
      saved: { path: target, bytes: CLOUD.length },
      file: {
        key: 'CLDX2345',
        source: 'cloud',
        path: `${LIB}/items/CLDX2345/file`,
        md5: md5(CLOUD),
        expectedMd5: md5(CLOUD),
        md5Matches: true,
      },
    });
    expect(readFileSync(target).equals(CLOUD)).toBe(true);
    expect(
      world.server.log.filter((e) => e.method === 'GET' && e.path === `/${LIB}/items/CLDX2345/file`),
    ).toHaveLength(1);

    const bad = join(world.box.dir, 'out', 'damaged.pdf');
    const damaged = await zot(['attachment', 'get', 'DMGD2345', '--save', bad]);
    expect(damaged.code).toBe(1);
    expect(damaged.env.error.code).toBe('api_error');
    expect(damaged.env.error.message).toContain(`downloaded from Zotero’s cloud storage has MD5 `);
    expect(damaged.env.error.message).toContain(`but Zotero recorded ${md5(DAMAGED)}`);
    expect(existsSync(bad)).toBe(false);
  });
});
