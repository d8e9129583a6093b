/**
 * Three replicas of a shared deployment, each its own `zot server` process with its own disk,
 * sharing one PostgreSQL: a person signs in at one and calls the others with the same token;
 * a replica killed while Zotero has applied its write but before it could answer leaves the
 * request to the client's retry on another replica, which lands it exactly once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZOT } from '../../support/cli.js';
import { startDroppingProxy, type DroppingProxy } from '../../support/dropping-proxy.js';
import { postgresUrl } from '../../support/postgres.js';
import { startZoteroOAuthServer, type ZoteroOAuthFake } from '../../support/zotero-oauth-server.js';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';
import { isolatedEnv } from './harness.js';
import { clientWith, signIn, textOf } from './signed-in.js';
import { freePort, waitUntilUp } from '../../support/free-port.js';

const KEY = 'ReplicaKey00000000000R01';
let zotero: ZoteroTestServer;
let proxy: DroppingProxy;
let oauth: ZoteroOAuthFake;
let token: string;
const replicas: Array<{ url: string; process: ChildProcess; dir: string; stderr: string[] }> = [];

beforeAll(async () => {
  zotero = await startZoteroServer();
  zotero.addUser({ userID: 808, username: 'rita' });
  zotero.addKey({ key: KEY, userID: 808, access: { user: { library: true, notes: true, write: true } } });
  proxy = await startDroppingProxy(zotero.url);
  oauth = await startZoteroOAuthServer();
  const database = await postgresUrl();
  const ports = [await freePort(), await freePort(), await freePort()];
  // Behind a load balancer all replicas answer at one public URL; here it is the first one's.
  const publicUrl = `http://127.0.0.1:${ports[0]}`;
  const secret = randomBytes(32).toString('base64');
  for (const port of ports) {
    const dir = mkdtempSync(join(tmpdir(), 'zoteus-replica-'));
    const env = {
      ...isolatedEnv(),
      ...oauth.env(),
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      // Each replica's own disk: nothing a later request needs may live there.
      HOME: dir,
      ZOT_CACHE_DIR: join(dir, 'cache'),
      ZOTEUS_DATA_DIR: join(dir, 'data'),
      ZOTEUS_COMPILE_CACHE: 'off',
      ZOTERO_API_URL: proxy.url,
      ZOTEUS_AUTH: 'zotero',
      ZOTEUS_SECRET_KEYS: secret,
      ZOTEUS_DATABASE_URL: database,
    };
    const child = spawn(
      process.execPath,
      [ZOT, 'server', '--port', String(port), '--public-url', publicUrl],
      {
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const stderr: string[] = [];
    child.stderr!.setEncoding('utf8').on('data', (d: string) => stderr.push(d));
    replicas.push({ url: `http://127.0.0.1:${port}`, process: child, dir, stderr });
  }
  for (const r of replicas) {
    await waitUntilUp(`${r.url}/.well-known/oauth-protected-resource`, () => r.stderr.join(''), 20_000);
  }
  token = await signIn(publicUrl, oauth, { userID: 808, username: 'rita', apiKey: KEY });
}, 60_000);

afterAll(async () => {
  for (const r of replicas) {
    if (r.process.exitCode === null && r.process.signalCode === null) {
      const exited = new Promise((resolve) => r.process.once('exit', resolve));
      r.process.kill('SIGTERM');
      await exited;
    }
    rmSync(r.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
  await proxy.close();
  await oauth.close();
  await zotero.close();
});

describe('three replicas on one PostgreSQL', () => {
  it('a token issued by one replica is good at every replica, and the key is checked once for all', async () => {
    zotero.library('users/808').addItems([{ title: 'Read from any replica' }]);
    zotero.clearLog();
    for (const r of replicas) {
      const client = await clientWith(`${r.url}/mcp`, token);
      try {
        expect(textOf(await client.callTool({ name: 'zotero_search_items', arguments: {} }))).toContain(
          'Read from any replica',
        );
      } finally {
        await client.close();
      }
    }
    // One replica asked Zotero who the key is; the others read its answer from PostgreSQL.
    expect(zotero.log.filter((r) => r.path === '/keys/current')).toHaveLength(1);
  });

  it('a replica killed after Zotero applied its write: the retry on another replica lands it exactly once', async () => {
    const title = 'Written once, whatever dies';
    const args = { items: [{ itemType: 'book', title }], idempotency_key: 'replica-kill-1' };
    const doomed = replicas[1]!;
    const survivor = replicas[2]!;
    proxy.drop({ method: 'POST', path: /^\/users\/808\/items/, hold: true });
    const first = await clientWith(`${doomed.url}/mcp`, token);
    const lost = first.callTool({ name: 'zotero_create_items', arguments: args }).then(
      () => 'answered',
      () => 'lost',
    );
    // Zotero has the item; the replica is waiting for the answer when it dies.
    await proxy.held();
    const titled = () => [...zotero.library('users/808').items.values()].filter((i) => i.title === title);
    expect(titled()).toHaveLength(1);
    const exited = new Promise((resolve) => doomed.process.once('exit', resolve));
    doomed.process.kill('SIGKILL');
    await exited;
    // The client never hears an answer (it may keep trying to reconnect to the dead replica).
    const heard = await Promise.race([lost, new Promise((r) => setTimeout(() => r('no answer'), 500))]);
    expect(heard).not.toBe('answered');
    void first.close().catch(() => undefined);

    const retry = await clientWith(`${survivor.url}/mcp`, token);
    try {
      const result = await retry.callTool({ name: 'zotero_create_items', arguments: args });
      expect(result.isError ?? false).toBe(false);
      expect(titled()).toHaveLength(1);
      const created = (result as { structuredContent: { created?: Array<{ key: string }> } })
        .structuredContent;
      expect(JSON.stringify(created)).toContain(titled()[0]!.key);
      // And again: a replay of the stored outcome, nothing sent.
      const posts = () => zotero.log.filter((r) => r.method === 'POST').length;
      const before = posts();
      const again = await retry.callTool({ name: 'zotero_create_items', arguments: args });
      expect(textOf(again)).toBe(textOf(result));
      expect(posts()).toBe(before);
      expect(titled()).toHaveLength(1);
    } finally {
      await retry.close();
    }
  });
});
