import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIB, setup, type Harness } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await setup();
});
afterEach(async () => {
  await h.close();
});

function seedCollections(n: number): string[] {
  return h.server
    .library(LIB)
    .addCollections(Array.from({ length: n }, (_, i) => ({ name: `C${String(i).padStart(4, '0')}` })));
}

const gets = (): typeof h.server.log => h.server.log.filter((e) => e.method === 'GET');

describe('listAll paging', () => {
  it('reads 250 collections in 3 GETs, always sending start and limit=100', async () => {
    const keys = seedCollections(250);
    const result = await h.client.listAll(`/${LIB}/collections`);
    expect(result.complete).toBe(true);
    expect(result.totalResults).toBe(250);
    expect(result.read).toBe(250);
    expect(new Set(result.objects.map((o) => o.key))).toEqual(new Set(keys));
    expect(result.libraryVersion).toBe(h.server.library(LIB).version);
    const log = gets();
    expect(log).toHaveLength(3);
    expect(log.map((e) => e.query.start).sort()).toEqual(['0', '100', '200']);
    for (const entry of log) expect(entry.query.limit).toBe('100');
  });

  it('sends start and limit even for a listing that fits one page', async () => {
    seedCollections(3);
    const result = await h.client.listAll(`/${LIB}/collections`);
    expect(result.read).toBe(3);
    expect(gets()).toHaveLength(1);
    expect(gets()[0]?.query).toMatchObject({ start: '0', limit: '100' });
  });

  it('fetches pages in parallel once the total is known, never more than 4 in flight', async () => {
    seedCollections(1000);
    h.server.setLatency(25);
    const result = await h.client.listAll(`/${LIB}/collections`);
    expect(result.read).toBe(1000);
    expect(gets()).toHaveLength(10);
    expect(h.server.maxInFlight()).toBeLessThanOrEqual(4);
    expect(h.server.maxInFlight()).toBeGreaterThan(1);
  });

  it('keeps to 4 in flight across different operations of one client', async () => {
    const keys = seedCollections(600);
    h.server.setLatency(20);
    await Promise.all([
      h.client.listAll(`/${LIB}/collections`),
      h.client.listAll(`/${LIB}/collections/top`, { cache: false }),
      h.client.getByKeys(LIB, 'collections', keys),
    ]);
    expect(h.server.log.length).toBeGreaterThanOrEqual(24);
    expect(h.server.maxInFlight()).toBeLessThanOrEqual(4);
  });

  it('detects a server that ignores start: stops, no duplicates, reports incomplete', async () => {
    seedCollections(250);
    h.server.faults.ignoreStart(true);
    const result = await h.client.listAll(`/${LIB}/collections`);
    expect(result.complete).toBe(false);
    expect(result.reason).toBe('ignored_start');
    expect(result.message).toMatch(/ignored the start parameter/);
    expect(result.totalResults).toBe(250);
    const keys = result.objects.map((o) => o.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toHaveLength(100);
    expect(gets().length).toBeLessThanOrEqual(3);
  });

  it('caps the objects read: complete false, how many were read and the total', async () => {
    seedCollections(250);
    const result = await h.client.listAll(`/${LIB}/collections`, { max: 150 });
    expect(result.complete).toBe(false);
    expect(result.reason).toBe('cap');
    expect(result.read).toBe(150);
    expect(result.objects).toHaveLength(150);
    expect(result.totalResults).toBe(250);
    expect(gets()).toHaveLength(2);
  });

  it('re-reads a listing whose library changed between pages', async () => {
    seedCollections(250);
    h.server.faults.concurrentEdit({
      match: { method: 'GET', path: 'start=100' },
      apply: (server) => server.library(LIB).addCollections([{ name: 'Added meanwhile' }]),
    });
    const result = await h.client.listAll(`/${LIB}/collections`);
    expect(result.complete).toBe(true);
    expect(result.read).toBe(251);
    expect(result.libraryVersion).toBe(h.server.library(LIB).version);
  });
});

describe('listAll cache (If-Modified-Since-Version)', () => {
  it('answers an unchanged listing from one 304, and re-reads after a change', async () => {
    seedCollections(250);
    const cold = await h.client.listAll(`/${LIB}/collections`);
    expect(cold.fromCache).toBe(false);
    h.server.clearLog();

    const warm = await h.client.listAll(`/${LIB}/collections`);
    expect(h.server.log).toHaveLength(1);
    expect(h.server.log[0]?.status).toBe(304);
    expect(h.server.log[0]?.headers['if-modified-since-version']).toBe(String(cold.libraryVersion));
    expect(warm.fromCache).toBe(true);
    expect(warm.complete).toBe(true);
    expect(warm.objects.map((o) => o.key)).toEqual(cold.objects.map((o) => o.key));

    h.server.library(LIB).addCollections([{ name: 'New one' }]);
    h.server.clearLog();
    const changed = await h.client.listAll(`/${LIB}/collections`);
    expect(changed.fromCache).toBe(false);
    expect(changed.read).toBe(251);
    expect(gets()).toHaveLength(3);
  });

  it('keys the cache by path and query, and belongs to one client instance', async () => {
    seedCollections(5);
    await h.client.listAll(`/${LIB}/collections`, { query: { sort: 'title' } });
    h.server.clearLog();
    await h.client.listAll(`/${LIB}/collections`, { query: { sort: 'title', direction: 'desc' } });
    expect(h.server.log[0]?.headers['if-modified-since-version']).toBeUndefined();

    const other = h.makeClient();
    h.server.clearLog();
    await other.listAll(`/${LIB}/collections`, { query: { sort: 'title' } });
    expect(h.server.log[0]?.headers['if-modified-since-version']).toBeUndefined();
  });
});
