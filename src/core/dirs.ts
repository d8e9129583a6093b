/**
 * Making folders without `mkdir(…, { recursive: true })`: on Node 20 that call never returns on
 * a path under procfs (`ZOT_CACHE_DIR=/proc/…` spun at 100% CPU). One level at a time, each
 * `mkdir` fails or succeeds, so a folder that cannot be made is an error at once, never a hang.
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Makes `dir` and its missing parents (new ones with `mode`); throws the first failure. */
export function ensureDir(dir: string, mode = 0o700): void {
  const missing: string[] = [];
  for (let current = resolve(dir); ;) {
    try {
      if (statSync(current).isDirectory()) break;
      throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${current}'`), {
        code: 'ENOTDIR',
        path: current,
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    missing.push(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const folder of missing.reverse()) {
    try {
      mkdirSync(folder, { mode });
    } catch (error) {
      // Another process may have made it meanwhile.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/** ensureDir for caches: false instead of an error, since a cache that cannot be kept is skipped. */
export function makeDirs(dir: string, mode = 0o700): boolean {
  try {
    ensureDir(dir, mode);
    return true;
  } catch {
    return false;
  }
}
