/**
 * The desktop's local API: detection (not running, disabled with the hint to enable it, a
 * server that is not a local API, enabled), the base URL setting, the client reused with no
 * key, and the test server's local API mode (user 0, no key, unpaginated, 403 when disabled).
 */
import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isZoteusError, type ZoteusError } from '../../../src/core/errors.js';
import { createLocalApiClient } from '../../../src/core/local/local-api-client.js';
import {
  DEFAULT_LOCAL_API_URL,
  detectLocalApi,
  ENABLE_LOCAL_API_HINT,
  localApi,
  localApiError,
  localApiUrl,
  LOCAL_API_RECHECK_MS,
} from '../../../src/core/local/local-api.js';
import { loadConfig } from '../../../src/core/config.js';
import { createDeps } from '../../../src/core/deps.js';
import { CLI_VERSION } from '../../../src/core/version.js';
import { startZoteroServer, type ZoteroTestServer } from '../../support/zotero-server/index.js';
import { movableClock } from '../library/world.js';

let server: ZoteroTestServer;
beforeEach(async () => {
  server = await startZoteroServer();
  server.addUser({ userID: 7, username: 'desk' });
  server.addUser({ userID: 8, username: 'someone' });
  server.addGroup({ id: 70, name: 'Mine', owner: 7, members: [] });
  server.addGroup({ id: 80, name: 'Not mine', owner: 8, members: [] });
  server.library('users/7').addCollections([{ key: 'AAAA2345', name: 'Desk' }]);
  server.library('groups/80').addItems([{ title: 'Elsewhere' }]);
});
afterEach(async () => {
  await server.close();
});

function deps(env: Record<string, string> = {}, clock = movableClock()) {
  const e = { HOME: '/nonexistent', ...env };
  return createDeps({ config: loadConfig(e), env: e, version: CLI_VERSION, surface: 'mcp', clock });
}

describe('ZOTEUS_LOCAL_API_URL', () => {
  it('defaults to the desktop port, drops a trailing slash, refuses what is not an http URL', () => {
    expect(localApiUrl({})).toBe(DEFAULT_LOCAL_API_URL);
    expect(DEFAULT_LOCAL_API_URL).toBe('http://127.0.0.1:23119/api');
    expect(localApiUrl({ ZOTEUS_LOCAL_API_URL: 'http://localhost:1234/api/' })).toBe(
      'http://localhost:1234/api',
    );
    for (const bad of ['not a url', 'ftp://127.0.0.1/api', 'http://u:p@127.0.0.1/api']) {
      try {
        localApiUrl({ ZOTEUS_LOCAL_API_URL: bad });
        throw new Error('expected a validation_error');
      } catch (error) {
        expect(isZoteusError(error) && error.code).toBe('validation_error');
        expect((error as ZoteusError).field).toBe('ZOTEUS_LOCAL_API_URL');
      }
    }
  });
});

describe('detection', () => {
  it('nothing listening: not running, at once', async () => {
    const gone = await startZoteroServer();
    await gone.close();
    const started = Date.now();
    const status = await detectLocalApi({ url: `${gone.url}/api` });
    expect(Date.now() - started).toBeLessThan(400);
    expect(status).toMatchObject({ available: false, state: 'not_running', url: `${gone.url}/api` });
    expect(status.detail).toMatch(/not running.*ECONNREFUSED/);
  });

  it('no answer in time: not running (a hung app does not stall a command)', async () => {
    const silent = createServer(() => {}); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const status = await detectLocalApi({ url: `http://127.0.0.1:${port}/api`, timeoutMs: 100 });
      expect(status).toMatchObject({ available: false, state: 'not_running' });
      expect(status.detail).toMatch(/did not answer .* within 100 ms/);
    } finally {
      silent.close();
    }
  });

  it('Zotero 6 (no local API): unsupported', async () => {
    const status = await detectLocalApi({ url: `${server.url}/api` });
    expect(status).toMatchObject({ available: false, state: 'unsupported' });
    expect(status.hint).toMatch(/version 7/);
  });

  it('disabled in Zotero’s settings: 403, with the way to enable it', async () => {
    const url = server.serveLocalApi({ userID: 7, enabled: false });
    const status = await detectLocalApi({ url });
    expect(status).toMatchObject({ available: false, state: 'disabled', hint: ENABLE_LOCAL_API_HINT });
    expect(status.detail).toMatch(/local API is disabled \(HTTP 403/);
    expect(ENABLE_LOCAL_API_HINT).toMatch(
      /Settings → Advanced .*Allow other applications on this computer to communicate with Zotero/,
    );
  });

  it('enabled: available, with the library version and the user the answer shows', async () => {
    const url = server.serveLocalApi({ userID: 7 });
    const status = await detectLocalApi({ url });
    expect(status).toMatchObject({
      available: true,
      state: 'enabled',
      libraryVersion: server.library('users/7').version,
      userID: 7,
    });
    const probe = server.log.at(-1);
    expect(probe).toMatchObject({ path: '/api/users/0/collections', query: { limit: '1' } });
    expect(probe?.headers['zotero-api-key']).toBeUndefined();
  });

  it('per deps: probed once, again after 30 s or after forget()', async () => {
    const url = server.serveLocalApi({ userID: 7 });
    const clock = movableClock();
    const d = deps({ ZOTEUS_LOCAL_API_URL: url }, clock);
    const api = await localApi(d);
    const probes = () => server.log.filter((e) => e.path === '/api/users/0/collections').length;
    await Promise.all([api.status(), api.status()]);
    await api.status();
    expect(probes()).toBe(1);
    clock.advance(LOCAL_API_RECHECK_MS);
    server.setLocalApiEnabled(false);
    expect((await api.status()).state).toBe('disabled');
    expect(probes()).toBe(2);
    server.setLocalApiEnabled(true);
    api.forget();
    expect((await api.status()).available).toBe(true);
    expect(probes()).toBe(3);
    await d.services.close();
  });
});

describe('the client: the Web API client without a key', () => {
  it('reads user 0 and the groups the desktop holds; unpaginated unless limit is given', async () => {
    const url = server.serveLocalApi({ userID: 7 });
    server.library('users/7').addItems(Array.from({ length: 130 }, (_, i) => ({ title: `Item ${i}` })));
    const client = createLocalApiClient(deps(), url);
    const all = await client.request<unknown[]>('GET', '/users/0/items');
    expect(all.data).toHaveLength(130);
    expect(all.totalResults).toBe(130);
    const page = await client.request<unknown[]>('GET', '/users/0/items', {
      query: { limit: 120, start: 5 },
    });
    expect(page.data).toHaveLength(120); // no clamp at 100
    const same = await client.request<Array<{ library: { id: number } }>>('GET', '/users/7/collections');
    expect(same.data[0]?.library.id).toBe(7);
    const groups = await client.request<Array<{ id: number }>>('GET', '/users/0/groups');
    expect(groups.data.map((g) => g.id)).toEqual([70]);
    // A group the desktop does not hold, another user: 404. Writes: refused.
    await expect(client.request('GET', '/groups/80/items')).rejects.toMatchObject({ code: 'not_found' });
    await expect(client.request('GET', '/users/8/items')).rejects.toMatchObject({ code: 'not_found' });
    await expect(
      client.request('POST', '/users/0/collections', { body: [{ name: 'x' }], writeToken: 'a'.repeat(32) }),
    ).rejects.toMatchObject({ status: 405 });
    expect(server.log.every((e) => e.headers['zotero-api-key'] === undefined)).toBe(true);
  });

  it('disabled: every request answers 403, which reads as the local API being off', async () => {
    const url = server.serveLocalApi({ userID: 7, enabled: false });
    const client = createLocalApiClient(deps(), url);
    for (const path of ['/users/0/items', '/groups/70/collections', '/keys/current', '/nothing']) {
      const caught = await client.request('GET', path).catch((e: unknown) => e);
      const mapped = localApiError(caught, url) as ZoteusError;
      expect(mapped.code).toBe('api_error');
      expect(mapped.message).toMatch(/HTTP 403.*disabled/);
      expect(mapped.hint).toContain(ENABLE_LOCAL_API_HINT);
    }
  });

  it('the app quitting mid-call is a network_error naming the desktop app', async () => {
    const url = server.serveLocalApi({ userID: 7 });
    const client = createLocalApiClient(deps(), url);
    await server.close();
    const caught = await client.request('GET', '/users/0/items').catch((e: unknown) => e);
    const mapped = localApiError(caught, url) as ZoteusError;
    expect(mapped.code).toBe('network_error');
    expect(mapped.message).toMatch(/Zotero desktop app stopped answering/);
    server = await startZoteroServer(); // for afterEach
  });
});
