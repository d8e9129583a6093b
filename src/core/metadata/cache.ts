/**
 * The disk cache of the metadata services' answers: `$ZOT_CACHE_DIR/metadata/<service>/`, one
 * file per record, named by the SHA-256 of the service's id for it (a lower-cased DOI, an arXiv
 * id), holding `{id, at, value}`. A record is used for a day (`CACHE_TTL_MS`); `value` null
 * keeps "the service does not know this id" just as long. Failures are never kept. A file that
 * does not parse, belongs to another id or is too old is ignored (and replaced by the next
 * answer); a cache that cannot be written is a debug line, never a failure of the check.
 * Writes are atomic (a temporary file, then a rename), files 0600 in 0700 folders.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Deps } from '../tool.js';
import type { ServiceId } from './service.js';

/** How long an answer is used. */
export const CACHE_TTL_MS = 24 * 60 * 60 * 1000;

export interface MetadataCache<T> {
  /** The cached value (null: the service knows no such record); undefined when there is none in date. */
  get(id: string): T | null | undefined;
  put(id: string, value: T | null): Promise<void>;
}

interface Stored {
  id: string;
  at: number;
  value: unknown;
}

export function metadataCacheDir(deps: Pick<Deps, 'config'>, service: ServiceId): string {
  return join(deps.config.cacheDir, 'metadata', service);
}

function fileName(id: string): string {
  return `${createHash('sha256').update(id).digest('hex')}.json`;
}

/** The cache of one service's records (`valid` says whether a stored value still has the shape callers expect). */
export function metadataCache<T>(
  deps: Pick<Deps, 'config' | 'clock' | 'log'>,
  service: ServiceId,
  valid: (value: unknown) => value is T,
): MetadataCache<T> {
  const dir = metadataCacheDir(deps, service);
  let made = false;
  return {
    get(id) {
      let stored: Stored;
      try {
        stored = JSON.parse(readFileSync(join(dir, fileName(id)), 'utf8')) as Stored;
      } catch {
        return undefined;
      }
      if (typeof stored !== 'object' || stored === null || stored.id !== id || typeof stored.at !== 'number')
        return undefined;
      const age = deps.clock.now() - stored.at;
      // A record from a little ahead of this clock (paced waits of another process's clock,
      // a clock set back) is still today's; one more than a day ahead is not trusted.
      if (age >= CACHE_TTL_MS || age <= -CACHE_TTL_MS) return undefined;
      if (stored.value === null) return null;
      return valid(stored.value) ? stored.value : undefined;
    },
    async put(id, value) {
      const path = join(dir, fileName(id));
      const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        if (!made) {
          mkdirSync(dir, { recursive: true, mode: 0o700 });
          made = true;
        }
        const stored: Stored = { id, at: deps.clock.now(), value };
        await writeFile(tmp, JSON.stringify(stored), { mode: 0o600 });
        await rename(tmp, path);
      } catch (error) {
        await rm(tmp, { force: true }).catch(() => {});
        deps.log.debug(`Could not cache a ${service} answer in ${dir}: ${(error as Error).message}`);
      }
    },
  };
}
