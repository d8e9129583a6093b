/** --idempotency-key through the real binary: replay bytes, conflicts, partial retries, concurrency. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FIXTURE_ZOT, runZot, sandbox } from '../../support/cli.js';
import { startKeyServer } from '../../support/key-server.js';
import type { ZoteroTestServer } from '../../support/zotero-server/index.js';

const KEY = 'AbCdEfGhIjKlMnOpQrStUvWx';
let box: ReturnType<typeof sandbox>;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.cleanup());
const zot = (args: string[], env: Record<string, string | undefined> = {}) =>
  runZot(args, {
    env: { ...box.env, ZOTERO_API_URL: keys.url, ZOTERO_API_KEY: KEY, ...env },
    bin: FIXTURE_ZOT,
  });
// The fixture write needs a key: the pipeline checks it with this server before the work.
let keys: ZoteroTestServer;
beforeAll(async () => {
  keys = await startKeyServer(KEY);
});
afterAll(() => keys.close());
const logOf = (name: string) =>
  existsSync(join(box.dir, name)) ? readFileSync(join(box.dir, name), 'utf8') : '';

describe('--idempotency-key', () => {
  it('a repeat with the same arguments replays the original stdout bytes and exit code without running again', async () => {
    const first = await zot(['fixture', 'write', 'hello', '--idempotency-key', 'k1']);
    expect(first.code).toBe(0);
    const second = await zot(['fixture', 'write', 'hello', '--idempotency-key', 'k1']);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(logOf('writes.log')).toBe('hello\n');
  });

  it('replays without credentials, since nothing is sent', async () => {
    const first = await zot(['fixture', 'write', 'hello', '--idempotency-key', 'k1']);
    const replay = await zot(['fixture', 'write', 'hello', '--idempotency-key', 'k1'], {
      ZOTERO_API_KEY: undefined,
    });
    expect(replay.code).toBe(0);
    expect(replay.stdout).toBe(first.stdout);
  });

  it('the same key with different arguments is conflict (exit 6, not retryable)', async () => {
    await zot(['fixture', 'write', 'hello', '--idempotency-key', 'k1']);
    const r = await zot(['fixture', 'write', 'goodbye', '--idempotency-key', 'k1']);
    expect(r.code).toBe(6);
    expect(r.json().error).toMatchObject({ code: 'conflict', retryable: false, field: 'idempotency_key' });
    expect(logOf('writes.log')).toBe('hello\n');
  });

  it('keys are scoped per command path: the same key on another command does not collide', async () => {
    await zot(['fixture', 'write', 'hello', '--idempotency-key', 'shared']);
    const other = await zot(['fixture', 'destroy', 'ABCD2345', '--yes', '--idempotency-key', 'shared']);
    expect(other.code).toBe(0);
    expect(logOf('destroyed.log')).toBe('ABCD2345\n');
  });

  it('a different library is a different request', async () => {
    await zot(['fixture', 'write', 'hello', '--idempotency-key', 'k1']);
    const r = await zot(['fixture', 'write', 'hello', '--idempotency-key', 'k1'], {
      ZOTERO_LIBRARY_ID: '99',
    });
    expect(r.code).toBe(6);
  });

  it('a failed call stores nothing, so a retry with the same key does the work', async () => {
    const failed = await zot(['fixture', 'batch', 'bad-1', '--idempotency-key', 'k2']);
    expect(failed.code).toBe(5);
    writeFileSync(join(box.dir, 'heal'), '');
    const retry = await zot(['fixture', 'batch', 'bad-1', '--idempotency-key', 'k2']);
    expect(retry.code).toBe(0);
    expect(logOf('attempts.log')).toBe('bad-1\nbad-1\n');
  });

  it('a partial result is stored; re-running retries only the failed entries and returns the merged envelope', async () => {
    const first = await zot(['fixture', 'batch', 'a', 'bad-1', 'b', 'bad-2', '--idempotency-key', 'k3']);
    expect(first.code).toBe(7);
    expect(logOf('attempts.log')).toBe('a\nbad-1\nb\nbad-2\n');

    writeFileSync(join(box.dir, 'heal'), '');
    const second = await zot(['fixture', 'batch', 'a', 'bad-1', 'b', 'bad-2', '--idempotency-key', 'k3']);
    expect(second.code).toBe(0);
    expect(logOf('attempts.log')).toBe('a\nbad-1\nb\nbad-2\nbad-1\nbad-2\n');
    const data = second.json().data as { succeeded: Array<{ entry: string }>; failed: unknown[] };
    expect(data.succeeded.map((s) => s.entry)).toEqual(['a', 'b', 'bad-1', 'bad-2']);
    expect(data.failed).toEqual([]);

    // Now complete: a third run replays the merged envelope byte for byte.
    const third = await zot(['fixture', 'batch', 'a', 'bad-1', 'b', 'bad-2', '--idempotency-key', 'k3']);
    expect(third.stdout).toBe(second.stdout);
    expect(logOf('attempts.log').split('\n').length).toBe(7);
  });

  it('a partial retry that still fails keeps the partial result for the next try', async () => {
    await zot(['fixture', 'batch', 'a', 'bad-1', '--idempotency-key', 'k4']);
    const again = await zot(['fixture', 'batch', 'a', 'bad-1', '--idempotency-key', 'k4']);
    expect(again.code).toBe(7);
    expect(logOf('attempts.log')).toBe('a\nbad-1\nbad-1\n');
    const data = again.json().data as { succeeded: unknown[]; failed: unknown[] };
    expect(data.succeeded).toHaveLength(1);
    expect(data.failed).toHaveLength(1);
  });

  it('two processes with one key at once: the work is done once and both print the same envelope', async () => {
    const env = { FIXTURE_SLOW_MS: '1500' };
    const [a, b] = await Promise.all([
      zot(['fixture', 'slow', 'once', '--idempotency-key', 'race'], env),
      zot(['fixture', 'slow', 'once', '--idempotency-key', 'race'], env),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(a.stdout).toBe(b.stdout);
    expect(logOf('slow.log').trim().split('\n')).toHaveLength(1);
  });

  it('is refused on read commands', async () => {
    const r = await zot(['fixture', 'list', '--idempotency-key', 'k']);
    expect(r.code).toBe(3);
  });

  it('the store lives in $ZOT_CACHE_DIR/idempotency.db', async () => {
    await zot(['fixture', 'write', 'hello', '--idempotency-key', 'k1']);
    expect(existsSync(join(box.env.ZOT_CACHE_DIR as string, 'idempotency.db'))).toBe(true);
  });
});
