import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ZoteusError } from '../../../src/core/errors.js';
import { API_KEY, caught, errorTexts, LIB, setup, type Harness } from './helpers.js';

let h: Harness;
/** Every error of this file: none may carry the key (checked after each test). */
let errors: ZoteusError[];
beforeEach(async () => {
  h = await setup();
  errors = [];
  h.server.library(LIB).addItems([{ title: 'one' }]);
});
afterEach(async () => {
  for (const error of errors) expect(errorTexts(error)).not.toContain(API_KEY);
  for (const line of h.logLines) expect(line).not.toContain(API_KEY);
  await h.close();
});

async function failure(promise: Promise<unknown>): Promise<ZoteusError> {
  const error = await caught(promise);
  errors.push(error);
  return error;
}

const items = `/${LIB}/items`;

describe('requests', () => {
  it('sends the version header and the key in Zotero-API-Key only, never in a URL', async () => {
    await h.client.request('GET', items, { query: { limit: 1 } });
    await h.client.listAll(items);
    await h.client.getKeyInfo();
    for (const entry of h.server.log) {
      expect(entry.headers['zotero-api-version']).toBe('3');
      expect(entry.headers['zotero-api-key']).toBe(API_KEY);
      expect(JSON.stringify(entry.query)).not.toContain(API_KEY);
      expect(entry.path).not.toContain(API_KEY);
      expect(entry.query.key).toBeUndefined();
    }
    expect(h.server.log[0]?.query).toEqual({ limit: '1' });
  });

  it('refuses to put a key parameter in a URL', async () => {
    const error = await failure(h.client.request('GET', items, { query: { key: API_KEY } }));
    expect(error.code).toBe('internal_error');
    expect(h.server.log).toHaveLength(0);
  });

  it('logs method, path, status and ms per request, redacted', async () => {
    await h.client.request('GET', items, { query: { limit: 1 } });
    expect(h.logLines).toHaveLength(1);
    expect(h.logLines[0]).toMatch(new RegExp(`^GET ${items}\\?limit=1 200 \\d+ms$`));
  });
});

describe('typed errors', () => {
  it('a 403 "Invalid key" is auth_invalid on any path', async () => {
    const bad = h.makeClient({ apiKey: 'WrongKeyWrongKey12345678' });
    for (const path of [items, `/${LIB}/collections`, '/keys/current']) {
      const error = await failure(bad.request('GET', path));
      expect(error.code).toBe('auth_invalid');
      expect(error.status).toBe(403);
      expect(error.message).toContain(`GET ${path}`);
      expect(error.message).toContain('HTTP 403');
      expect(error.hint).toMatch(/ZOTERO_API_KEY/);
      expect(errorTexts(error)).not.toContain('WrongKeyWrongKey12345678');
    }
  });

  it('any 403 on /keys/current is auth_invalid; other 403s are permission_denied', async () => {
    h.server.faults.status({ status: 403, body: 'Forbidden', match: { path: '/keys/current' } });
    const onKeys = await failure(h.client.getKeyInfo());
    expect(onKeys.code).toBe('auth_invalid');

    h.server.addGroup({ id: 99, name: 'Not mine', owner: 42, members: [] });
    const denied = await failure(h.client.request('GET', '/groups/99/items'));
    expect(denied.code).toBe('permission_denied');
    expect(denied.message).toContain('GET /groups/99/items');
    expect(denied.hint).toMatch(/permissions/);
  });

  it('a read-only key writing is permission_denied', async () => {
    h.server.addKey({ key: 'ReadOnlyKey0000000000000', userID: 1, access: { user: { library: true } } });
    const ro = h.makeClient({ apiKey: 'ReadOnlyKey0000000000000' });
    const error = await failure(ro.writeBatch(LIB, 'collections', [{ key: 'ABCD2345', name: 'x' }]));
    expect(error.code).toBe('permission_denied');
  });

  it('404 → not_found', async () => {
    const error = await failure(h.client.request('GET', `/${LIB}/collections/ABCD2345`));
    expect(error.code).toBe('not_found');
    expect(error.status).toBe(404);
    expect(error.message).toContain(`GET /${LIB}/collections/ABCD2345`);
  });

  it.each([
    [409, 'The target library is locked', 'conflict', false],
    [412, 'Library has been modified since specified version', 'conflict', true],
    [428, 'If-Unmodified-Since-Version not provided', 'internal_error', false],
    [400, 'Invalid sort value', 'api_error', false],
    [500, 'Internal server error', 'api_error', true],
    [502, 'Bad gateway', 'api_error', true],
  ])('%i → %s', async (status, body, code, retryable) => {
    h.server.faults.status({ status, body });
    const error = await failure(h.client.request('GET', items));
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect(error.status).toBe(status);
    expect(error.message).toContain(`HTTP ${status}`);
    expect(error.message).toContain(body);
    expect(error.hint).toBeTruthy();
  });

  it('413 → validation_error naming the field when known', async () => {
    h.server.faults.status({ status: 413, body: "Collection name 'xxxx…' too long" });
    const named = await failure(
      h.client.request('POST', `/${LIB}/collections`, { body: [{ name: 'x' }], field: 'name' }),
    );
    expect(named.code).toBe('validation_error');
    expect(named.field).toBe('name');

    h.server.faults.status({ status: 413, body: "Field 'title' value too long" });
    const fromBody = await failure(h.client.request('POST', items, { body: [] }));
    expect(fromBody.field).toBe('title');
  });

  it('never lets the key through, even when a server echoes it', async () => {
    h.server.faults.status({
      status: 500,
      body: `Internal error for Zotero-API-Key: ${API_KEY} (key ${API_KEY})`,
    });
    const error = await failure(h.client.request('GET', items));
    expect(error.message).toContain('[REDACTED]');
    h.server.faults.status({ status: 403, body: `Invalid key ${API_KEY}` });
    const invalid = await failure(h.client.request('GET', items));
    expect(invalid.code).toBe('auth_invalid');
  });

  it('keeps the key out of every error and log line of every fault', async () => {
    // Only the slow case needs a short timeout: on a loaded machine a 100 ms timeout
    // would also cut ordinary answers and turn every later case into a network_error.
    const client = h.makeClient({ timeoutMs: 10_000, retryBudgetMs: 1000 });
    const impatient = h.makeClient({ timeoutMs: 100, retryBudgetMs: 1000 });
    const faults = h.server.faults;
    const cases: Array<() => void> = [
      () => faults.rateLimit({ retryAfter: 100 }),
      () => faults.rateLimit({ status: 503, retryAfter: 100 }),
      () => faults.reset({ times: 5 }),
      () => faults.slow({ ms: 1000 }),
      () => faults.status({ status: 403 }),
      () => faults.status({ status: 404 }),
      () => faults.status({ status: 409 }),
      () => faults.status({ status: 412 }),
      () => faults.status({ status: 413 }),
      () => faults.status({ status: 428 }),
      () => faults.status({ status: 500 }),
    ];
    for (const [index, inject] of cases.entries()) {
      faults.clear();
      inject();
      await failure((index === 3 ? impatient : client).request('GET', items));
    }
    expect(errors.map((e) => e.code)).toEqual([
      'rate_limited',
      'rate_limited',
      'network_error',
      'network_error',
      'permission_denied',
      'not_found',
      'conflict',
      'conflict',
      'validation_error',
      'internal_error',
      'api_error',
    ]);
    expect(h.logLines.length).toBeGreaterThan(10);
  });
});

describe('paths with their own query', () => {
  it('merges a query written in the path with the query object', async () => {
    await h.client.request('GET', `${items}?sort=title&tag=a&tag=b`, { query: { limit: 1 } });
    expect(h.server.log[0]?.query).toEqual({ sort: 'title', tag: ['a', 'b'], limit: '1' });
    const error = await failure(h.client.request('GET', `${items}?key=${API_KEY}`));
    expect(error.code).toBe('internal_error');
    expect(h.server.log).toHaveLength(1);
  });
});
