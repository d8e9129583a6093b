import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZoteusError } from '../../../src/core/errors.js';
import { IDEMPOTENCY_TTL_MS, openIdempotencyStore } from '../../../src/core/store/idempotency.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'idem-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const result = (stdout: string, partial = false) => ({
  exitCode: partial ? 7 : 0,
  stdout,
  partial,
  input: { a: 1 },
  output: { ok: 1 },
});

describe('idempotency store', () => {
  it('records expire after 24 hours', async () => {
    let t = 1_000_000;
    const path = join(dir, 'idem.db');
    const store = await openIdempotencyStore(path, { now: () => t });
    expect((await store.begin('cmd', 'k', 'h1')).kind).toBe('fresh');
    store.complete('cmd', 'k', result('out\n'));
    t += IDEMPOTENCY_TTL_MS - 1;
    expect(await store.begin('cmd', 'k', 'h1')).toMatchObject({
      kind: 'replay',
      result: { stdout: 'out\n' },
    });
    t += 2;
    // Expired: the same key now stands for a new request, even with other arguments.
    expect((await store.begin('cmd', 'k', 'h2')).kind).toBe('fresh');
    store.close();
  });

  it('purges expired records when opened', async () => {
    let t = 0;
    const path = join(dir, 'idem.db');
    const a = await openIdempotencyStore(path, { now: () => t });
    await a.begin('cmd', 'k', 'h');
    a.complete('cmd', 'k', result('x'));
    a.close();
    t = IDEMPOTENCY_TTL_MS + 10;
    const b = await openIdempotencyStore(path, { now: () => t });
    b.close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM idempotency').get()).toEqual({ n: 0 });
    db.close();
  });

  it('a claim held by a live process makes the other wait, then a retryable conflict when the wait runs out', async () => {
    let t = 0;
    const path = join(dir, 'idem.db');
    const owner = await openIdempotencyStore(path, {
      now: () => t,
      pid: 111,
      host: 'h',
      isAlive: () => true,
    });
    await owner.begin('cmd', 'k', 'h');
    const waiter = await openIdempotencyStore(path, {
      now: () => t,
      pid: 222,
      host: 'h',
      isAlive: () => true,
      sleep: async (ms) => {
        t += ms;
      },
    });
    const error = await waiter.begin('cmd', 'k', 'h', { waitMs: 1000, pollMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZoteusError);
    expect(error).toMatchObject({ code: 'conflict', retryable: true });
    owner.close();
    waiter.close();
  });

  it('a waiter gets the owner’s result as soon as it is stored', async () => {
    const path = join(dir, 'idem.db');
    const owner = await openIdempotencyStore(path, { pid: 1, host: 'h', isAlive: () => true });
    await owner.begin('cmd', 'k', 'h');
    const waiter = await openIdempotencyStore(path, {
      pid: 2,
      host: 'h',
      isAlive: () => true,
      sleep: async () => {
        owner.complete('cmd', 'k', result('done\n'));
      },
    });
    expect(await waiter.begin('cmd', 'k', 'h')).toMatchObject({
      kind: 'replay',
      result: { stdout: 'done\n' },
    });
    owner.close();
    waiter.close();
  });

  it('a claim left by a dead process is taken over', async () => {
    const path = join(dir, 'idem.db');
    const dead = await openIdempotencyStore(path, { pid: 999_999, host: 'h' });
    await dead.begin('cmd', 'k', 'h');
    dead.close();
    const next = await openIdempotencyStore(path, { pid: 5, host: 'h', isAlive: () => false });
    expect((await next.begin('cmd', 'k', 'h')).kind).toBe('fresh');
    next.close();
  });

  it('abandon releases a fresh claim but keeps a partial result', async () => {
    const path = join(dir, 'idem.db');
    const store = await openIdempotencyStore(path);
    await store.begin('cmd', 'fresh', 'h');
    store.abandon('cmd', 'fresh');
    expect((await store.begin('cmd', 'fresh', 'other')).kind).toBe('fresh');

    await store.begin('cmd', 'p', 'h');
    store.complete('cmd', 'p', result('partial\n', true));
    const retry = await store.begin('cmd', 'p', 'h');
    expect(retry).toMatchObject({ kind: 'partial', result: { stdout: 'partial\n', input: { a: 1 } } });
    store.abandon('cmd', 'p');
    expect((await store.begin('cmd', 'p', 'h')).kind).toBe('partial');
    store.close();
  });
});
