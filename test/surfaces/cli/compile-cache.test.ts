/**
 * The V8 code cache `bin/zot` gives the bundled CLI (surfaces/cli/compile-cache.ts): a first
 * run writes it under ZOT_CACHE_DIR, later runs read it, and nothing about it (a damaged
 * file, a folder that cannot be written, the cache turned off) changes an answer or prints
 * a word. On Node 20 the files are this module's own (one per bundle file); on Node 22+ they
 * are Node's (`module.enableCompileCache`), so file names are checked on Node 20 only.
 */
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileCacheDir } from '../../../src/surfaces/cli/compile-cache.js';
import { SAMPLE_KEYS } from '../../support/zotero-sqlite/index.js';
import type { sandbox } from '../../support/cli.js';
import { runZot, desktopSandbox, type RunResult } from '../../support/cli.js';

const ownCache =
  typeof (Module as unknown as { enableCompileCache?: unknown }).enableCompileCache !== 'function';
const KEY = SAMPLE_KEYS.user.items.seaLevelArticle;
let box: ReturnType<typeof sandbox>;

beforeEach(async () => {
  box = await desktopSandbox();
});
afterEach(() => box.cleanup());

/** Every file under the cache folder, by path relative to it. */
function cacheFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
      .sort();
  } catch {
    return [];
  }
}

/** The answer without what differs from run to run (request id, latency). */
function answer(r: RunResult): unknown {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const { meta: _meta, ...rest } = r.json();
  return rest;
}

describe('the code cache of the bundled CLI', () => {
  it('is written by a first run, read by the next, and changes no answer', async () => {
    const dir = join(box.env.ZOT_CACHE_DIR!, 'v8');
    const first = await runZot(['read', KEY, '--json'], { env: box.env });
    const written = cacheFiles(dir);
    expect(written.length).toBeGreaterThan(5);
    if (ownCache) {
      // One file per bundle file the command compiled: the read tool's module, not every tool's.
      expect(written.some((f) => f.endsWith('.bin') && f.includes('tools~items~get-item.js@'))).toBe(true);
      expect(written.some((f) => f.includes('tools~index.js@'))).toBe(false);
      // One folder per Node build and per installed bundle.
      expect(new Set(written.map((f) => f.split('/').slice(0, 2).join('/')))).toEqual(
        new Set([`${process.version}-${process.arch}/${written[0]!.split('/')[1]}`]),
      );
      expect(written[0]!.split('/')[1]).toMatch(/^[0-9a-f]{8}$/);
      expect(statSync(join(dir, written[0]!)).mode & 0o777).toBe(0o600);
    }
    const mtimes = written.map((f) => statSync(join(dir, f)).mtimeMs);
    const second = await runZot(['read', KEY, '--json'], { env: box.env });
    expect(answer(second)).toEqual(answer(first));
    expect((answer(second) as { data: { item: { key: string } } }).data.item.key).toBe(KEY);
    // Accepted, so not written again.
    expect(cacheFiles(dir)).toEqual(written);
    expect(written.map((f) => statSync(join(dir, f)).mtimeMs)).toEqual(mtimes);
  });

  it('a damaged cache is only slower: the answer is the same, and its files are written anew', async () => {
    const dir = join(box.env.ZOT_CACHE_DIR!, 'v8');
    const first = await runZot(['read', KEY, '--json'], { env: box.env });
    const files = cacheFiles(dir);
    for (const f of files) {
      const size = statSync(join(dir, f)).size;
      writeFileSync(join(dir, f), Buffer.alloc(size, 0x5a));
    }
    const second = await runZot(['read', KEY, '--json'], { env: box.env });
    expect(answer(second)).toEqual(answer(first));
    if (ownCache) {
      const rewritten = files.filter((f) => f.endsWith('.bin') && readFileSync(join(dir, f))[0] !== 0x5a);
      expect(rewritten.length).toBeGreaterThan(5);
    }
  });

  it.runIf(ownCache)(
    'a run that writes drops the caches of bundle files gone or rebuilt, and stale temporary files',
    async () => {
      const dir = join(box.env.ZOT_CACHE_DIR!, 'v8');
      await runZot(['read', KEY, '--json'], { env: box.env });
      const [version] = readdirSync(dir);
      const [bundle] = readdirSync(join(dir, version!));
      const folder = join(dir, version!, bundle!);
      const kept = cacheFiles(folder);
      const getItem = kept.find((f) => f.startsWith('tools~items~get-item.js@'))!;
      // A chunk of an earlier build, and the read tool's module as an earlier build had it.
      writeFileSync(join(folder, 'chunks~gone-AbCd1234.js@100-1700000000000.bin'), 'x');
      writeFileSync(join(folder, 'tools~items~get-item.js@1-1700000000000.bin'), 'x');
      // A write that never finished, an hour ago, and one that may still be running.
      const old = join(folder, `${getItem}.4242.1.tmp`);
      writeFileSync(old, 'x');
      utimesSync(old, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
      const running = join(folder, `${getItem}.4243.1.tmp`);
      writeFileSync(running, 'x');
      // One cache missing, so the next run compiles that file and writes.
      rmSync(join(folder, getItem));
      await runZot(['read', KEY, '--json'], { env: box.env });
      expect(cacheFiles(folder)).toEqual([...kept, `${getItem}.4243.1.tmp`].sort());
    },
  );

  it('ZOTEUS_COMPILE_CACHE=off writes none, and a cache folder that cannot be made costs nothing but time', async () => {
    const off = await runZot(['read', KEY, '--json'], { env: { ...box.env, ZOTEUS_COMPILE_CACHE: 'off' } });
    expect(cacheFiles(join(box.env.ZOT_CACHE_DIR!, 'v8'))).toEqual([]);
    // ZOT_CACHE_DIR names a file: no folder can be made under it.
    const blocked = join(box.dir, 'not-a-folder');
    writeFileSync(blocked, 'x');
    const unwritable = await runZot(['read', KEY, '--json'], { env: { ...box.env, ZOT_CACHE_DIR: blocked } });
    expect(answer(unwritable)).toEqual(answer(off));
  });
});

describe('a cache folder that cannot be made', () => {
  // The timeout only detects a hang (Node 20's recursive mkdir spins forever under /proc);
  // what is asserted is that the run ends by itself with the normal answer.
  const HANG = 60_000;

  it.each([
    ['under /proc, where no folder can be made', () => '/proc/self/nonexistent/x'],
    ['directly under /proc', () => '/proc/zoteus-cache'],
    [
      'under a regular file',
      () => {
        writeFileSync(join(box.dir, 'a-file'), 'x');
        return join(box.dir, 'a-file', 'cache');
      },
    ],
    [
      'in a folder no one may write to',
      () => {
        mkdirSync(join(box.dir, 'locked'), { mode: 0o500 });
        return join(box.dir, 'locked', 'cache');
      },
    ],
  ])(
    '%s: the command ends with its normal answer, uncached',
    async (_name, cacheDir) => {
      const normal = await runZot(['read', KEY, '--json'], { env: box.env });
      const r = await runZot(['read', KEY, '--json'], {
        env: { ...box.env, ZOT_CACHE_DIR: cacheDir() },
        timeoutMs: HANG,
      });
      expect(r.code).not.toBe(-1); // -1: killed by the hang detector
      expect(answer(r)).toEqual(answer(normal));
    },
    HANG + 10_000,
  );
});

describe('a cache folder others may write to', () => {
  it.skipIf(process.platform === 'win32')('is not used: cached code runs as the user', async () => {
    const dir = join(box.env.ZOT_CACHE_DIR!, 'v8');
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777);
    const r = await runZot(['read', KEY, '--json'], { env: box.env });
    expect((answer(r) as { ok: boolean }).ok).toBe(true);
    expect(cacheFiles(dir)).toEqual([]);
    chmodSync(dir, 0o700);
    await runZot(['read', KEY, '--json'], { env: box.env });
    expect(cacheFiles(dir).length).toBeGreaterThan(5);
  });
});

describe('compileCacheDir', () => {
  it('is v8/ under ZOT_CACHE_DIR (else the platform cache folder), or none when turned off', () => {
    expect(compileCacheDir({ ZOT_CACHE_DIR: '/c', HOME: '/h' })).toBe(join('/c', 'v8'));
    expect(compileCacheDir({ HOME: '/h', XDG_CACHE_HOME: '/x' })).toBe(
      process.platform === 'linux' ? join('/x', 'zoteus', 'v8') : compileCacheDir({ HOME: '/h' }),
    );
    expect(compileCacheDir({ ZOT_CACHE_DIR: '/c', ZOTEUS_COMPILE_CACHE: 'off' })).toBeUndefined();
  });
});
