import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { caught, LIB, setup, type Harness } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await setup();
  h.server.library(LIB).addItems([{ title: 'one' }]);
});
afterEach(async () => {
  await h.close();
});

const items = `/${LIB}/items`;

describe('rate limits', () => {
  it('waits out a 429 with Retry-After (fake clock), then succeeds', async () => {
    h.server.faults.rateLimit({ retryAfter: 7 });
    const response = await h.client.request('GET', items, { query: { limit: 1 } });
    expect(response.status).toBe(200);
    expect(h.clock.sleeps).toEqual([7000]);
    expect(h.server.log.map((e) => e.status)).toEqual([429, 200]);
  });

  it('retries a 503 without Retry-After after a capped exponential backoff', async () => {
    h.server.faults.rateLimit({ status: 503, times: 2 });
    const response = await h.client.request('GET', items);
    expect(response.status).toBe(200);
    expect(h.server.log.map((e) => e.status)).toEqual([503, 503, 200]);
    // random() = 0.5: 3/4 of 1 s, then of 2 s.
    expect(h.clock.sleeps).toEqual([750, 1500]);
  });

  it('a 503 without Retry-After beyond the budget says what the server answered, not that it asked to wait', async () => {
    const client = h.makeClient({ retryBudgetMs: 2_000 });
    h.server.faults.rateLimit({ status: 503, times: 10 });
    const error = await caught(client.request('GET', items));
    expect(error.code).toBe('rate_limited');
    expect(error.message).toMatch(
      new RegExp(
        `^The Zotero API answered HTTP 503 to GET ${items} without saying how long to wait, and waiting \\d+ s more before retrying would overrun this call's retry budget\\.$`,
      ),
    );
    expect(error.message).not.toContain('asked to wait');
  });

  it('a 429 with Retry-After beyond the budget says the server asked to wait', async () => {
    const client = h.makeClient({ retryBudgetMs: 2_000 });
    h.server.faults.rateLimit({ retryAfter: 30 });
    const error = await caught(client.request('GET', items));
    expect(error.message).toContain('asked to wait 30 s (HTTP 429)');
  });

  it('honours Backoff for every later request to the server', async () => {
    h.server.faults.backoff({ seconds: 5 });
    await h.client.request('GET', items);
    expect(h.clock.sleeps).toEqual([]);
    await h.client.request('GET', `/${LIB}/collections`);
    expect(h.clock.sleeps).toEqual([5000]);
    await h.client.request('GET', `/${LIB}/collections`);
    expect(h.clock.sleeps).toEqual([5000]);
  });

  it('fails at once with rate_limited and retry_after_seconds when the wait exceeds the budget', async () => {
    const client = h.makeClient({ retryBudgetMs: 10_000 });
    h.server.faults.rateLimit({ retryAfter: 30 });
    const error = await caught(client.request('GET', items));
    expect(error.code).toBe('rate_limited');
    expect(error.retryable).toBe(true);
    expect(error.retryAfterSeconds).toBe(30);
    expect(error.toJSON().retry_after_seconds).toBe(30);
    expect(error.message).toContain(`GET ${items}`);
    expect(h.clock.sleeps).toEqual([]);
    expect(h.server.log).toHaveLength(1);
  });

  it('shares one budget across the retries of a call', async () => {
    const client = h.makeClient({ retryBudgetMs: 10_000 });
    h.server.faults.rateLimit({ retryAfter: 4, times: 5 });
    const error = await caught(client.request('GET', items));
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfterSeconds).toBe(4);
    expect(h.clock.sleeps).toEqual([4000, 4000]);
    expect(h.server.log).toHaveLength(3);
  });

  it('counts a Backoff pause against the budget of the next call', async () => {
    const client = h.makeClient({ retryBudgetMs: 10_000 });
    h.server.faults.backoff({ seconds: 60 });
    await client.request('GET', items);
    const error = await caught(client.request('GET', items));
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfterSeconds).toBe(60);
    expect(h.server.log).toHaveLength(1);
  });

  it('applies the budget to a whole listing, not per page; the next call has its own', async () => {
    h.server.library(LIB).addCollections(Array.from({ length: 150 }, (_, i) => ({ name: `c${i}` })));
    const client = h.makeClient({ retryBudgetMs: 5_000 });
    h.server.faults.rateLimit({ retryAfter: 3, match: { path: 'start=0' } });
    h.server.faults.rateLimit({ retryAfter: 3, match: { path: 'start=100' } });
    // Each page's wait fits the budget alone; the listing's two waits together do not.
    const error = await caught(client.listAll(`/${LIB}/collections`));
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfterSeconds).toBe(3);
    expect(h.clock.sleeps).toEqual([3000]);
    const result = await client.listAll(`/${LIB}/collections`);
    expect(result.read).toBe(150);
  });
});

describe('network failures', () => {
  it('retries a GET after a connection reset', async () => {
    h.server.faults.reset();
    const response = await h.client.request('GET', items);
    expect(response.status).toBe(200);
    expect(h.server.log.map((e) => e.status)).toEqual([0, 200]);
  });

  it('gives up on a GET after a bounded number of resets with network_error', async () => {
    h.server.faults.reset({ times: 10 });
    const error = await caught(h.client.request('GET', items));
    expect(error.code).toBe('network_error');
    expect(error.retryable).toBe(true);
    expect(h.server.log).toHaveLength(3);
  });

  it('turns a slow answer into a timeout network_error', async () => {
    const client = h.makeClient({ timeoutMs: 100 });
    h.server.faults.slow({ ms: 400 });
    const error = await caught(client.request('GET', items));
    expect(error.code).toBe('network_error');
    expect(error.message).toMatch(/no answer within 100 ms/);
    expect(error.hint).toMatch(/ZOTEUS_TIMEOUT_MS/);
  });

  it('reports a refused connection as network_error naming the server', async () => {
    const url = h.server.url;
    await h.server.close();
    const client = h.makeClient({ apiUrl: url });
    const error = await caught(client.request('GET', items));
    expect(error.code).toBe('network_error');
    expect(error.message).toContain(url);
    expect(error.message).toMatch(/ECONNREFUSED/);
    h = { ...h, close: async () => {} };
  });
});
