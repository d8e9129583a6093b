/**
 * `zot attach` under the server's pauses: a `429`/`503` at the authorization or at the storage
 * POST is waited out (Retry-After) and sent again, a `Backoff` holds the next request to the
 * same server, all within the call's retry budget; the storage host never gets a Zotero header
 * or the key, and a resent upload sends the whole file again (re-read from disk).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/surfaces/cli/main.js';
import { groups, tools } from '../../../src/tools/index.js';
import { KEY } from '../../core/library/world.js';
import { LIB, startItemsWorld, type ItemsWorld } from '../items/setup.js';

let w: ItemsWorld;
let parent: string;
beforeEach(async () => {
  w = await startItemsWorld();
  [parent] = w.world.server.library(LIB).addItems([{ title: 'Parent' }]) as [string];
});
afterEach(async () => {
  await w.close();
});

/** The CLI in process: exit code and the JSON envelope. */
async function zot(argv: string[], extraEnv: Record<string, string> = {}) {
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
    env: w.env(extraEnv),
    io: { stdout: sink((s) => (stdout += s)), stderr: sink(() => undefined), stdin },
    tools,
    groups,
  });
  return { code, json: () => JSON.parse(stdout) as Record<string, unknown> };
}

const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\n'), Buffer.alloc(300_000, 7)]);
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

function file(name: string, bytes: Buffer): string {
  const path = join(w.world.box.dir, name);
  writeFileSync(path, bytes);
  return path;
}

const STORAGE = /^\/storage\/upload\//;
const FILE = /\/items\/[A-Z0-9]{8}\/file$/;
const logOf = (method: string, path: RegExp) =>
  w.world.server.log.filter((e) => e.method === method && path.test(e.path));
const attachments = () =>
  [...w.world.server.library(LIB).items.values()].filter((i) => i.itemType === 'attachment');

/** No Zotero header and no key reached the storage host, on any attempt. */
function expectStorageToldNothing(): void {
  for (const e of logOf('POST', STORAGE)) {
    expect(Object.keys(e.headers).filter((h) => /^(zotero-|authorization$|if-)/.test(h))).toEqual([]);
    expect(JSON.stringify(e.headers)).not.toContain(KEY);
  }
}

describe('zot attach: waits the server asks for', () => {
  it('429 with Retry-After at the authorization: waited out, asked again, the file lands', async () => {
    w.world.server.faults.rateLimit({ retryAfter: 1, match: { method: 'POST', path: FILE } });
    const started = Date.now();
    const r = await zot(['attach', parent, '--file', file('a.pdf', PDF)]);
    expect(r.code).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    const env = r.json() as { data: { succeeded: Array<{ key: string; md5: string; upload: string }> } };
    expect(env.data.succeeded[0]).toMatchObject({ md5: md5(PDF), upload: 'uploaded' });
    expect(logOf('POST', FILE).map((e) => e.status)).toEqual([429, 200, 204]);
    expect(logOf('POST', STORAGE).map((e) => e.status)).toEqual([201]);
    expect(w.world.server.files.files.get(`${LIB}/${env.data.succeeded[0]!.key}`)?.md5).toBe(md5(PDF));
  });

  it('503 with Retry-After at the storage POST: waited out, the file re-read and sent whole again, no Zotero header', async () => {
    w.world.server.faults.rateLimit({ status: 503, retryAfter: 1, match: { method: 'POST', path: STORAGE } });
    const r = await zot(['attach', parent, '--file', file('b.pdf', PDF)]);
    expect(r.code).toBe(0);
    const env = r.json() as { data: { succeeded: Array<{ key: string; md5: string; upload: string }> } };
    const key = env.data.succeeded[0]!.key;
    expect(env.data.succeeded[0]).toMatchObject({ md5: md5(PDF), upload: 'uploaded' });
    const storage = logOf('POST', STORAGE);
    expect(storage.map((e) => e.status)).toEqual([503, 201]);
    // The second attempt came after the wait, and carried every byte (the server checked the md5).
    expect(storage[1]!.startedAt - storage[0]!.endedAt).toBeGreaterThanOrEqual(900);
    expect(w.world.server.files.files.get(`${LIB}/${key}`)).toMatchObject({
      md5: md5(PDF),
      size: PDF.length,
    });
    expectStorageToldNothing();
    expect(attachments().filter((i) => !i.deleted)).toHaveLength(1);
  });

  it('Backoff from the storage host holds its next upload (the second file waits)', async () => {
    w.world.server.faults.backoff({ seconds: 1, match: { method: 'POST', path: STORAGE } });
    const r = await zot([
      'attach',
      parent,
      '--file',
      file('c1.pdf', PDF),
      '--file',
      file('c2.txt', Buffer.from('two')),
    ]);
    expect(r.code).toBe(0);
    const storage = logOf('POST', STORAGE);
    expect(storage.map((e) => e.status)).toEqual([201, 201]);
    expect(storage[1]!.startedAt - storage[0]!.endedAt).toBeGreaterThanOrEqual(900);
    expectStorageToldNothing();
  });

  it('Backoff at the authorization holds the registration that follows', async () => {
    w.world.server.faults.backoff({ seconds: 1, match: { method: 'POST', path: FILE } });
    const r = await zot(['attach', parent, '--file', file('d.pdf', PDF)]);
    expect(r.code).toBe(0);
    const [auth, registration] = logOf('POST', FILE);
    expect([auth!.status, registration!.status]).toEqual([200, 204]);
    expect(registration!.startedAt - auth!.endedAt).toBeGreaterThanOrEqual(900);
  });

  it('a Retry-After at the storage POST beyond the retry budget fails that file at once (rate_limited, item trashed)', async () => {
    w.world.server.faults.rateLimit({
      status: 503,
      retryAfter: 30,
      match: { method: 'POST', path: STORAGE },
    });
    const path = file('e.pdf', PDF);
    const started = Date.now();
    const r = await zot(['attach', parent, '--file', path], { ZOTEUS_RETRY_BUDGET_MS: '2000' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.code).not.toBe(0);
    const env = r.json() as {
      error: { code: string; failed: Array<Record<string, unknown>> };
    };
    expect(env.error.failed[0]).toMatchObject({ code: 503, reason: 'rate_limited', trashed: true });
    expect(env.error.failed[0]!.message).toMatch(
      new RegExp(
        `^The storage server answered HTTP 503 to the upload of ${path} and asked to wait 30 s, beyond this call's retry budget; nothing was registered\\. The empty attachment item [A-Z0-9]{8} was moved to the trash\\.$`,
      ),
    );
    expect(logOf('POST', STORAGE).map((e) => e.status)).toEqual([503]);
    expect(attachments().map((i) => i.deleted)).toEqual([true]);
  });
});
