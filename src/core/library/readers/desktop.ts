/**
 * The desktop app as the router sees it, detected once per deps (`deps.services`): its
 * `zotero.sqlite` (found through `discoverZoteroDataDir`, opened read-only once; the reader
 * follows the file's changes itself), its local API (probed with a short timeout; see
 * `core/local/local-api.ts`), the libraries it holds and the account it is signed in to.
 * Closed with the deps (`services.close()` closes the database).
 */
import { discoverZoteroDataDir, openZoteroSqlite, type ZoteroSqliteReader } from '../../local/index.js';
import { localApi, type LocalApi, type LocalApiStatus } from '../../local/local-api.js';
import { toZoteusError } from '../../errors.js';
import type { Deps } from '../../tool.js';

export const DESKTOP_SERVICE = 'zotero-desktop';
/** A long-running process looks for a database that was missing again after this long. */
const SQLITE_RECHECK_MS = 30_000;

export interface SqliteState {
  available: boolean;
  /** The database found, or the data directory looked at. */
  path: string | undefined;
  reader?: ZoteroSqliteReader;
  /** `version.userdata`. */
  schemaVersion?: number;
  /** `direct`: read in place; `snapshot`: a private copy (Zotero holds the database). */
  mode?: 'direct' | 'snapshot';
  detail: string;
  error?: { code: string; message: string; hint?: string };
  checkedAt: number;
}

/** One library the desktop holds. */
export interface DesktopLibrary {
  type: 'user' | 'group';
  /** Groups: the Web API group id. The user library: the signed-in user id, 0 when unknown. */
  id: number;
  /** The database's own id (when read from zotero.sqlite). */
  libraryID?: number;
  name: string;
  /** Whether Zotero lets this account edit it (zotero.sqlite's `libraries.editable`), when known. */
  editable?: boolean;
  /** Whether it may edit the library's files (`libraries.filesEditable`), when known. */
  filesEditable?: boolean;
}

export interface DesktopState {
  sqlite: SqliteState;
  localApi: LocalApiStatus;
  api: LocalApi;
  available: boolean;
}

export interface Desktop {
  state(): Promise<DesktopState>;
  /** The libraries the desktop holds: from zotero.sqlite, else from the local API. */
  libraries(): Promise<DesktopLibrary[]>;
  /**
   * The user the desktop is signed in to: a user id, 0 when it is signed in to none (its
   * library is not synced with any account), undefined when that cannot be told.
   */
  account(): Promise<number | undefined>;
  close(): Promise<void>;
}

async function openSqlite(deps: Deps): Promise<SqliteState> {
  const checkedAt = deps.clock.now();
  const discovery = discoverZoteroDataDir({ env: deps.env, config: deps.config });
  if (!discovery.database) {
    return {
      available: false,
      path: discovery.dataDir ?? discovery.checked[0]?.path,
      detail: `Zotero desktop data not found: ${discovery.reason}`,
      checkedAt,
    };
  }
  try {
    const reader = await openZoteroSqlite(discovery.database, { log: (line) => deps.log.debug(line) });
    const status = await reader.status();
    return {
      available: true,
      path: discovery.database,
      reader,
      schemaVersion: status.schemaVersion,
      mode: status.mode,
      detail:
        status.mode === 'snapshot'
          ? `${discovery.reason} Zotero holds the database, so a private copy is read (refreshed when it changes).`
          : `${discovery.reason} Read in place, read-only.`,
      checkedAt,
    };
  } catch (caught) {
    const error = toZoteusError(caught);
    return {
      available: false,
      path: discovery.database,
      detail: `${discovery.database} cannot be read: ${error.message}`,
      error: { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) },
      checkedAt,
    };
  }
}

/**
 * `settings` (`account`/`userID`) of the database, through the reader's own connection: a
 * second one on the same file would read its schema again (~3 ms of every desktop read).
 */
async function readAccount(reader: ZoteroSqliteReader): Promise<number | undefined> {
  return await reader.account();
}

/** The user id the reader puts in its objects' `library` (the same setting), when the library has any. */
async function accountFromObjects(
  reader: ZoteroSqliteReader,
  libraryID: number,
): Promise<number | undefined> {
  const [collection] = await reader.collections(libraryID, { includeTrashed: true });
  if (collection) return collection.library.id;
  const { items } = await reader.items(libraryID, { includeTrashed: true, limit: 1 });
  return items[0]?.library.id;
}

export function desktop(deps: Deps): Promise<Desktop> {
  return deps.services.get<Desktop>(DESKTOP_SERVICE, () => {
    let sqlite: Promise<SqliteState> | undefined;
    let account: Promise<number | undefined> | undefined;
    let apiGroups: Promise<DesktopLibrary[]> | undefined;
    let closed = false;

    const sqliteState = async (): Promise<SqliteState> => {
      const current = await (sqlite ??= openSqlite(deps));
      const now = deps.clock.now();
      if (!current.available && !current.error && now - current.checkedAt >= SQLITE_RECHECK_MS && !closed) {
        sqlite = openSqlite(deps);
        account = undefined;
        return sqlite;
      }
      return current;
    };

    const state = async (): Promise<DesktopState> => {
      const api = await localApi(deps);
      const [db, status] = await Promise.all([sqliteState(), api.status()]);
      return { sqlite: db, localApi: status, api, available: db.available || status.available };
    };

    const readAccountOnce = (): Promise<number | undefined> => {
      account ??= (async () => {
        const s = await state();
        const reader = s.sqlite.reader;
        if (!reader) return s.localApi.userID || undefined; // 0 from the local API says nothing
        try {
          return await readAccount(reader);
        } catch (error) {
          deps.log.debug(`Could not read the desktop's account setting: ${(error as Error).message}`);
        }
        try {
          return await accountFromObjects(reader, await reader.libraryIdFor({ type: 'user' }));
        } catch {
          return undefined;
        }
      })();
      return account;
    };

    const localApiGroups = (s: DesktopState): Promise<DesktopLibrary[]> => {
      apiGroups ??= (async () => {
        try {
          const response = await s.api.client.request('GET', '/users/0/groups', {});
          const groups: DesktopLibrary[] = [];
          for (const g of Array.isArray(response.data) ? (response.data as unknown[]) : []) {
            const o = g as { id?: unknown; data?: { id?: unknown; name?: unknown } };
            const id = typeof o.id === 'number' ? o.id : o.data?.id;
            if (typeof id !== 'number') continue;
            const name = typeof o.data?.name === 'string' ? o.data.name : `Group ${id}`;
            groups.push({ type: 'group', id, name });
          }
          return groups;
        } catch (error) {
          deps.log.debug(`local API: could not list the groups (${(error as Error).message})`);
          apiGroups = undefined;
          return [];
        }
      })();
      return apiGroups;
    };

    return {
      state,
      account: readAccountOnce,
      async libraries() {
        const s = await state();
        if (s.sqlite.reader) {
          const user = await readAccountOnce();
          return (await s.sqlite.reader.libraries()).map((l) => ({
            type: l.type,
            id: l.type === 'group' ? (l.groupID ?? 0) : (user ?? 0),
            libraryID: l.libraryID,
            name: l.name,
            editable: l.editable,
            filesEditable: l.filesEditable,
          }));
        }
        if (!s.localApi.available) return [];
        const own: DesktopLibrary = { type: 'user', id: (await readAccountOnce()) ?? 0, name: 'My Library' };
        return [own, ...(await localApiGroups(s))];
      },
      async close() {
        closed = true;
        const pending = sqlite;
        sqlite = undefined;
        const s = await pending?.catch(() => undefined);
        s?.reader?.close();
      },
    };
  });
}
