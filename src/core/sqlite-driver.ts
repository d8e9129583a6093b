/**
 * better-sqlite3, loaded the way that costs least at process start (every `zot` read of
 * zotero.sqlite pays it once):
 *
 * - imported as a module of this package: `npm run build` bundles its JavaScript into the
 *   CLI's chunks (scripts/bundle-cli.mjs), so no CommonJS loader or export scan runs for it;
 * - its compiled addon named directly (`nativeBinding`): otherwise the `bindings` package
 *   tries a dozen build folders and reads a stack trace to find the package, about 2 ms.
 *
 * The addon is loaded with `require`, so a process that also opens better-sqlite3 the usual
 * way (tests) shares the one copy. Every module that opens a database takes its class from
 * here; they all load only when a command reads a database.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ensureDir } from './dirs.js';

let loaded: typeof Database | undefined;

export function loadDatabaseClass(): typeof Database {
  if (loaded) return loaded;
  const addon = loadAddon();
  // A subclass, so `instanceof` and the statics (SqliteError) stay those of the package.
  class WithAddon extends Database {
    constructor(filename?: string | Buffer, options?: Database.Options) {
      // better-sqlite3 takes the loaded addon as well as its path (its types say path only).
      super(filename, { nativeBinding: addon as unknown as string, ...options });
    }
  }
  return (loaded = WithAddon as typeof Database);
}

function loadAddon(): object {
  const requireHere = createRequire(import.meta.url);
  const packageDir = join(dirname(requireHere.resolve('better-sqlite3')), '..');
  const built = join(packageDir, 'build', 'Release', 'better_sqlite3.node');
  if (existsSync(built)) return requireHere(built) as object;
  // Built elsewhere (a debug build): found as better-sqlite3 itself would, from its folder.
  const bindings = createRequire(join(packageDir, 'package.json'))('bindings') as (o: object) => object;
  return bindings({ bindings: 'better_sqlite3.node', module_root: packageDir });
}

/**
 * Why a database file of Zoteus' own (the idempotency store, the write journal) cannot be used,
 * in a user's words, from the error opening or writing it raised.
 */
export function whyUnusable(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_NOTADB') return 'it is not a database';
  if (code === 'SQLITE_CORRUPT') return 'the database is corrupt';
  if (code === 'SQLITE_CANTOPEN' || code === 'EISDIR' || code === 'ENOTDIR' || code === 'EEXIST')
    return 'it cannot be opened as a file';
  if (code === 'SQLITE_READONLY' || code === 'EACCES' || code === 'EPERM' || code === 'EROFS')
    return 'it cannot be written';
  return `SQLite: ${typeof code === 'string' ? code : 'unreadable'}`;
}

/**
 * Opens (creating its folder and file) a database of Zoteus' own: WAL, a 10 s wait for a lock
 * another process holds, then `setup` (pragmas, schema); closed again when setup fails.
 */
export function openOwnDatabase(path: string, setup: (db: Database.Database) => void): Database.Database {
  ensureDir(dirname(path));
  const DatabaseClass = loadDatabaseClass();
  const db = new DatabaseClass(path, { timeout: 10_000 });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 10000');
    setup(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
