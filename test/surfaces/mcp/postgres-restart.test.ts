/**
 * The state database goes away under a running shared deployment, and comes back: meanwhile
 * `/readyz` says not ready and `/mcp` answers 503 with Retry-After (tokens cannot be checked; not
 * a 401, not a 500), nothing reaching Zotero; once PostgreSQL is up again the same write with the
 * same idempotency key lands once, through the same process (its pool reconnects). A cluster of
 * its own, not the suite's.
 */
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMcp } from '../../../src/surfaces/mcp/run.js';
import { startZoteroOAuthServer, type ZoteroOAuthFake } from '../../support/zotero-oauth-server.js';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';
import { isolatedEnv } from './harness.js';
import { signIn } from './signed-in.js';
// @ts-expect-error: a plain .mjs script of the repository, without types.
import { startCluster } from '../../../scripts/postgres-cluster.mjs';
import { freePort, waitUntilUp } from '../../support/free-port.js';

interface Cluster {
  url: string;
  stop(): void;
  pause(): void;
  resume(): void;
}

const KEY = 'RestartKey00000000000R01';
let cluster: Cluster;
let zotero: ZoteroTestServer;
let oauth: ZoteroOAuthFake;
let base: string;
let token: string;
let stop: AbortController;
let running: Promise<number>;

beforeAll(async () => {
  cluster = (await startCluster()) as Cluster;
  zotero = await startZoteroServer();
  zotero.addUser({ userID: 606, username: 'pat' });
  zotero.addKey({ key: KEY, userID: 606, access: { user: { library: true, notes: true, write: true } } });
  oauth = await startZoteroOAuthServer();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  stop = new AbortController();
  const err = new PassThrough();
  err.resume();
  running = runMcp({
    env: isolatedEnv({
      ...oauth.env(),
      ZOTERO_API_URL: zotero.url,
      ZOTEUS_AUTH: 'zotero',
      ZOTEUS_SECRET_KEYS: randomBytes(32).toString('base64'),
      ZOTEUS_DATABASE_URL: cluster.url,
    }),
    http: true,
    port,
    publicUrl: base,
    stderr: err,
    signal: stop.signal,
  });
  await waitUntilUp(`${base}/readyz`);
  token = await signIn(base, oauth, { userID: 606, username: 'pat', apiKey: KEY });
}, 60_000);

afterAll(async () => {
  stop.abort();
  await running;
  await oauth.close();
  await zotero.close();
  cluster.stop();
});

/** A 2026-07-28 tools/call (no session, so nothing of it lives in the database but what the call keeps). */
async function call(name: string, args: Record<string, unknown>) {
  const { result } = await exchange(name, args);
  if (!result) throw new Error('no result');
  return result;
}

async function exchange(name: string, args: Record<string, unknown>) {
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const text = await response.text();
  const data = text.split('\n').filter((l) => l.startsWith('data:'));
  const json = JSON.parse(data.length ? data.at(-1)!.slice(5) : text) as {
    result?: { isError?: boolean; content: Array<{ text: string }>; _meta?: Record<string, unknown> };
  };
  return {
    status: response.status,
    headers: response.headers,
    result: json.result,
    error: (json as { error?: { message: string } }).error,
  };
}

const titled = (title: string) =>
  [...zotero.library('users/606').items.values()].filter((i) => i.title === title);

describe('PostgreSQL restarted under a running deployment', () => {
  it('not ready while it is down, a write refused before Zotero, and the same write landing once after', async () => {
    const args = { items: [{ itemType: 'book', title: 'Through a restart' }], idempotency_key: 'restart-1' };
    // Once with the database up: the tenant is known, the key checked.
    expect((await call('zotero_search_items', {})).isError ?? false).toBe(false);

    cluster.pause();
    try {
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'not_ready' });
      zotero.clearLog();
      // The token cannot be checked: 503 with Retry-After, not a 401 (the token is fine) nor a 500.
      const refused = await exchange('zotero_create_items', args);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.error?.message).toContain('cannot check access tokens now');
      expect(zotero.log).toEqual([]);
      expect(titled('Through a restart')).toHaveLength(0);
    } finally {
      cluster.resume();
    }

    let readyAgain = false;
    for (let i = 0; i < 100 && !readyAgain; i++) {
      readyAgain = (await fetch(`${base}/readyz`)).ok;
      if (!readyAgain) await new Promise((r) => setTimeout(r, 100));
    }
    expect(readyAgain).toBe(true);
    const landed = await call('zotero_create_items', args);
    expect(landed.isError ?? false).toBe(false);
    expect(titled('Through a restart')).toHaveLength(1);
    const again = await call('zotero_create_items', args);
    expect(again.content).toEqual(landed.content);
    expect(titled('Through a restart')).toHaveLength(1);
  });
});
