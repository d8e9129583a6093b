/**
 * The scale bench's libraries: `buildLargeLibrary` at realistic shares, cached on disk under a
 * name made of the options and of the generator's own sources, so a re-run (or another size's
 * run) copies the file instead of building it again, and an edited generator builds afresh.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { buildLargeLibrary, type LargeLibraryOptions } from '../../src/demo/sample/index.js';

/**
 * The shares of a real library rather than of the generator's defaults: most items have a PDF,
 * a fifth of the PDFs carry annotations (up to a dozen each), about 40 % of the items carry
 * importers' keyword tags as well (so the distinct tags grow with the library), and one
 * collection for every 25 items (2,000 at 50,000; 10,000 at 250,000).
 */
export function scaleOptions(items: number): Required<Omit<LargeLibraryOptions, 'seed'>> & { seed: number } {
  return {
    items,
    collections: Math.max(20, Math.round(items / 25)),
    groupItems: 1000,
    fulltextShare: 0.1,
    attachmentShare: 0.7,
    annotatedShare: 0.2,
    annotationsPerAttachment: 12,
    automaticTagShare: 0.4,
    seed: 42,
  };
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What the generated file depends on: the options and every source file of the generator. */
function cacheKey(options: object): string {
  const hash = createHash('sha256').update(JSON.stringify(options));
  for (const folder of ['src/demo/sample', 'src/demo/fixture']) {
    for (const name of readdirSync(join(ROOT, folder)).sort())
      if (name.endsWith('.ts')) hash.update(name).update(readFileSync(join(ROOT, folder, name)));
  }
  return hash.digest('hex').slice(0, 12);
}

export function cacheDir(): string {
  return process.env.BENCH_SCALE_CACHE ?? join(tmpdir(), 'zoteus-scale-cache');
}

export interface CachedLibrary {
  /** The cached zotero.sqlite (never written by the bench: it works on a copy). */
  path: string;
  /** Milliseconds the generator took, or undefined when the file was in the cache already. */
  builtMs: number | undefined;
}

/**
 * The cached zotero.sqlite for `options`, generated first when it is not there. Built under a
 * temporary name and renamed once complete, so an interrupted build leaves nothing that looks done.
 */
export async function cachedLibrary(
  options: LargeLibraryOptions & { items: number },
): Promise<CachedLibrary> {
  const dir = join(cacheDir(), `items-${options.items}-${cacheKey(options)}`);
  const path = join(dir, 'zotero.sqlite');
  if (existsSync(path)) return { path, builtMs: undefined };
  mkdirSync(dir, { recursive: true });
  const partial = join(dir, `building-${process.pid}.sqlite`);
  for (const stale of [partial, `${path}-wal`, `${path}-shm`]) rmSync(stale, { force: true });
  const started = performance.now();
  await buildLargeLibrary(partial, { ...options, overwrite: true });
  const builtMs = performance.now() - started;
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(`${partial}${suffix}`)) renameSync(`${partial}${suffix}`, `${path}${suffix}`);
  }
  renameSync(partial, path);
  return { path, builtMs };
}

/** Copies the cached file (with its WAL, whose pages may not be checkpointed yet) to `to`. */
export function copyLibrary(from: string, to: string): void {
  copyFileSync(from, to);
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
}
