/**
 * The journal survives a crash between journal and write: `zot` (the built CLI, a child
 * process) is killed with SIGKILL once after the journal's commit and before its write reached
 * the server, and once after the server applied the write but before the answer came back.
 * History reports the request as interrupted; undo decides from the library what landed.
 */
import { spawn } from 'node:child_process';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openJournal } from '../../../src/core/journal/store.js';
import { ZOT } from '../../support/cli.js';
import { ALICE, startWorld, type World } from '../library/world.js';
import { zotAt } from '../../surfaces/cli/terminal-harness.js';

const LIB = `users/${ALICE}`;

/**
 * Forwards everything to the server, except the first POST: `before` holds it without sending it
 * on; `after` sends it on and holds the answer. `held` resolves when the POST is held.
 */
async function holdingProxy(upstream: string, mode: 'before' | 'after') {
  const target = new URL(upstream);
  let holding = false;
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const read = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve) => {
      const parts: Buffer[] = [];
      req.on('data', (d: Buffer) => parts.push(d));
      req.on('end', () => resolve(Buffer.concat(parts)));
    });
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await read(req);
      const hold = req.method === 'POST' && !holding;
      if (hold) holding = true;
      if (hold && mode === 'before') {
        release();
        return; // never sent on, never answered
      }
      const out = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          void read(answer).then((data) => {
            if (hold) {
              release();
              return; // applied upstream; the answer is never passed on
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(data);
          });
        },
      );
      out.end(body);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    held,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let w: World;
beforeEach(async () => {
  w = await startWorld();
});
afterEach(async () => {
  await w.close();
});
const lib = () => w.server.library(LIB);

/** Runs `zot` until the proxy holds its write, then kills it with SIGKILL. */
async function killedMidWrite(args: string[], mode: 'before' | 'after'): Promise<void> {
  const proxy = await holdingProxy(w.server.url, mode);
  try {
    const child = spawn(process.execPath, [ZOT, ...args], {
      env: w.env({ ZOTERO_API_URL: proxy.url }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, s) => resolve(s)));
    await Promise.race([
      proxy.held,
      exited.then(() => Promise.reject(new Error('zot ended before its write'))),
    ]);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
  } finally {
    await proxy.close();
  }
}

const journalFile = () => join(w.box.env.ZOTEUS_DATA_DIR as string, 'journal.db');

describe('a crash between journal and write (the built CLI: npm run build first)', () => {
  it('killed before the write reached the server: interrupted, nothing landed, undo has nothing to do', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    const versionBefore = lib().version;
    await killedMidWrite(['tag', 'add', 'x', a], 'before');
    expect(lib().items.get(a)?.tags ?? []).toEqual([]);
    expect(lib().version).toBe(versionBefore);

    // The journal holds the pending entry, committed before the request was sent.
    const journal = openJournal(journalFile());
    const [request] = (await journal.history({ start: 0, limit: 5 })).requests;
    await journal.close();
    expect(request).toMatchObject({ tool: 'zotero_manage_tags', status: 'pending', counts: { pending: 1 } });

    const h = await zotAt(['history'], { env: w.env() });
    expect((h.json().data as { requests: unknown[] }).requests).toMatchObject([
      {
        requestId: request?.requestId,
        status: 'interrupted',
        objects: { changed: 1, unknown: 1 },
        undoable: true,
      },
    ]);
    const undone = await zotAt(['undo', request?.requestId as string, '--yes'], { env: w.env() });
    expect(undone.code).toBe(0);
    expect(undone.json().data).toMatchObject({ updated: [], unchanged: [a], failed: [] });
    expect(lib().items.get(a)?.tags ?? []).toEqual([]);
  });

  it('killed after the server applied the write: interrupted, and undo takes the write back', async () => {
    const [a] = lib().addItems([{ title: 'A' }]) as [string];
    await killedMidWrite(['tag', 'add', 'x', a], 'after');
    expect(lib().items.get(a)?.tags).toEqual([{ tag: 'x' }]);

    const h = await zotAt(['history'], { env: w.env() });
    const [row] = (h.json().data as { requests: Array<{ requestId: string }> }).requests;
    expect(row).toMatchObject({ status: 'interrupted', objects: { changed: 1, unknown: 1 }, undoable: true });
    const undone = await zotAt(['undo', row?.requestId as string, '--yes'], { env: w.env() });
    expect(undone.code).toBe(0);
    expect(undone.json().data).toMatchObject({ updated: [a], failed: [] });
    expect(lib().items.get(a)?.tags ?? []).toEqual([]);
  });
});
