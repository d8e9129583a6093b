/**
 * Every folder Zoteus keeps under ZOT_CACHE_DIR (key checks, the Zotero schema, recent writes,
 * extracted text, the idempotency store, the code cache) under a path where no folder can be
 * made. Node 20's recursive mkdir never returns under /proc: a cache must fail, never the
 * command, and the idempotency store (not a cache) must say so clearly instead of hanging.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runZot } from '../../support/cli.js';
import { startWorld, type World } from '../../core/library/world.js';

// Only a hang detector: what is asserted is that each run ends by itself.
const HANG = 60_000;
let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());

const zot = (args: string[], cacheDir: string) =>
  runZot(args, { env: world.env({ ZOT_CACHE_DIR: cacheDir }), timeoutMs: HANG });

describe.skipIf(process.platform !== 'linux')('ZOT_CACHE_DIR under /proc', () => {
  it(
    'a Web API read (key check and its disk cache) answers as usual',
    async () => {
      const r = await zot(['groups', '--json'], '/proc/self/nonexistent/cache');
      expect(r.code).toBe(0);
      expect((r.json() as { ok: boolean }).ok).toBe(true);
    },
    HANG + 10_000,
  );

  it(
    'a write (recent-writes cache, schema cache) lands and answers as usual',
    async () => {
      const r = await zot(['collection', 'create', 'Cacheless', '--json'], '/proc/zoteus-cache');
      expect(r.code).toBe(0);
      expect([...world.server.library('users/1').collections.values()].map((c) => c.name)).toContain(
        'Cacheless',
      );
    },
    HANG + 10_000,
  );

  it(
    'with --idempotency-key the store cannot be kept: a clear validation_error, and nothing written',
    async () => {
      const r = await zot(
        ['collection', 'create', 'Never', '--idempotency-key', 'k', '--json'],
        '/proc/zoteus-cache',
      );
      expect(r.code).toBe(3);
      const error = (r.json() as { error: { code: string; message: string; field: string } }).error;
      expect(error).toMatchObject({ code: 'validation_error', field: 'ZOT_CACHE_DIR' });
      expect(error.message).toContain('/proc/zoteus-cache/idempotency.db');
      expect([...world.server.library('users/1').collections.values()].map((c) => c.name)).not.toContain(
        'Never',
      );
    },
    HANG + 10_000,
  );
});
