/**
 * Read-your-writes across CLI invocations after a write through the desktop's local API: the
 * next `zot` invocation reads that library through the local API, where the write already is,
 * even where it would otherwise read zotero.sqlite (the search index is fed from it). Here the
 * sample zotero.sqlite never sees the test server's writes: it stands for a copy taken before
 * the write, so a read served from it would be visibly stale.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';
import { SAMPLE_KEYS, startDesktopWorld, type DesktopWorld } from '../library/router-world.js';
import type { LocalWritesConfig } from '../../support/zotero-server/local-writes.js';

const LOCAL_KEY = 'L0calK3yAbCdEf1234567890abcdefgh';
const ARTICLE = SAMPLE_KEYS.user.items.seaLevelArticle;

let desk: DesktopWorld;
let writes: LocalWritesConfig;

beforeAll(async () => {
  desk = await startDesktopWorld({ localApi: true });
  writes = desk.server.serveLocalWrites();
  writes.keys.set(LOCAL_KEY, { remember: true, appName: 'Zoteus' });
});
afterAll(() => desk.close());
beforeEach(() => desk.server.clearLog());

const env = (extra: Record<string, string | undefined> = {}) =>
  desk.env({ ZOTEUS_LOCAL_API_KEY: LOCAL_KEY, ...extra });

async function zot(argv: string[], e = env()) {
  const r = await zotAt([...argv, '--json'], { env: e });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read the envelope loosely
  return r.json() as any;
}

describe('after a zot write to the desktop, the next zot invocation', () => {
  it('without a desktop write, the search index is fed from zotero.sqlite (the control)', async () => {
    const status = await zot(['index', 'status'], env({ ZOT_CACHE_DIR: join(desk.box.dir, 'other-cache') }));
    expect(status.data.backend).toBe('sqlite');
  });

  it('reads the library through the local API, and sees the write at once', async () => {
    const written = await zot(['tag', 'add', 'read-back-h20', ARTICLE]);
    expect(written.data.written_to).toBe('desktop');
    const server = desk.server.library(`users/${SAMPLE_KEYS.user.userID}`);
    const version = server.version;

    // Recorded for the next invocations, by the local API's url and the desktop's own name.
    const cacheDir = env().ZOT_CACHE_DIR as string;
    const file = join(cacheDir, 'desktop-writes.json');
    expect(existsSync(file)).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      writes: [{ url: desk.localApiUrl, library: 'users/0', at: expect.any(Number) }],
    });

    desk.server.clearLog();
    const found = await zot(['search', '--tag', 'read-back-h20']);
    expect(found.data.items.map((i: { key: string }) => i.key)).toEqual([ARTICLE]);
    expect(desk.server.log.some((e) => e.path.startsWith('/api/users/0/items'))).toBe(true);

    // The index is built from where the write is: the local API, at the write's library version.
    const built = await zot(['index', 'build']);
    expect(built.data.backend).toBe('localApi');
    expect(built.data.report.libraryVersion).toBe(version);
  });
});
