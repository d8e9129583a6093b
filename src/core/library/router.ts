/**
 * The router (architecture.md, "Backends"): which backend serves the reads of a library, and
 * why. Read tools open every library through `openLibraryReader`; writes open theirs through
 * `openWebLibrary`, which asks `write-route.ts` which side takes them (the desktop's local API
 * or the Web API); Web API writes record themselves with `noteWrite`.
 *
 * `ZOTEUS_LOCAL`:
 * - `off`: the Web API serves every library (`auth_missing` without a key).
 * - `auto` (default): the desktop app serves the libraries it holds (its local API when that
 *   answers, else its `zotero.sqlite`); the Web API serves the others.
 * - `on`: as `auto`, but the desktop must be there: without it every read fails and says what
 *   was looked for. A library the desktop does not hold still goes to the Web API when a key
 *   is configured (and fails clearly without one).
 *
 * Which libraries the desktop holds: its groups by group id; its personal library is
 * - the default library when neither a key nor a library is configured (`users/0`);
 * - a configured or named `users/N` only when the desktop is signed in to user N (the
 *   `settings` row `account`/`userID` of its database);
 * - the key's own user library when the key's user (known from a key check made earlier, in
 *   memory or, for the CLI, in the ten-minute disk cache: never a request made for routing) is
 *   the desktop's user. When the key's user is not known yet, the desktop's library is assumed
 *   to be the key's, unless the desktop is signed in to no account (then it cannot be).
 *
 * Read-your-writes: a write through the Web API records the library version it produced
 * (`noteWrite`: in memory per deps and, for the CLI across invocations, in
 * `$cacheDir/recent-writes.json`, kept ten minutes). While the desktop's copy of that library
 * is at an older version (Zotero has not synced the write down yet), its reads stay on the Web
 * API; once the local copy has caught up, they go back to the desktop.
 */
import { readFileSync } from 'node:fs';
import { ZoteusError } from '../errors.js';
import { ENABLE_LOCAL_API_HINT, localApiUrl, type LocalApiState } from '../local/local-api.js';
import type { Deps } from '../tool.js';
import type { KeyInfo } from '../zotero/index.js';
import {
  describeLibrary,
  libraryPrefix,
  localApiPrefix,
  resolveLibrary,
  type LibraryArgs,
  type LibraryRef,
} from './address.js';
import { authMissing, keyCachePath, parseKeyCacheFile } from './keys.js';
import type { BackendName, LibraryReader, Route } from './port.js';
import { pendingWrite, recentWrites } from './recent-writes.js';
import { desktop, type DesktopLibrary, type DesktopState } from './readers/desktop.js';
import { createSqliteReader } from './readers/sqlite.js';
import { onlyOn, paramRef } from '../call/refs.js';

export { noteWrite, RECENT_WRITE_TTL_MS } from './recent-writes.js';

export type { DesktopLibrary } from './readers/desktop.js';

/** A route as the router reports it: the backend, why, and the library it serves. */
export type LibraryRoute = Route & { library: string };

export interface OpenedReader {
  reader: LibraryReader;
  route: LibraryRoute;
}

/** Name of the key check state in `deps.services` (see keys.ts). */
const KEY_STATE_SERVICE = 'zotero-key-check';

// ---------------------------------------------------------------------------------------------
// Routing

/** The key's user id when a key check already told it (memory, or the CLI's disk cache). */
async function knownKeyUser(deps: Deps): Promise<number | undefined> {
  const apiKey = deps.config.apiKey;
  if (apiKey === undefined) return undefined;
  const now = deps.clock.now();
  const state = await deps.services.get<{ entry?: { info: KeyInfo; checkedAt: number } }>(
    KEY_STATE_SERVICE,
    () => ({}),
  );
  if (state.entry && state.entry.checkedAt <= now) return state.entry.info.userID;
  try {
    return parseKeyCacheFile(readFileSync(keyCachePath(deps.config, apiKey), 'utf8'), now)?.info.userID;
  } catch {
    return undefined;
  }
}

/** Where a library's reads go, and why; `error` instead of a backend when none can serve it. */
export interface RoutePlan {
  library: string;
  backend: BackendName | null;
  reason: string;
  /** The desktop's library, when the desktop serves it. */
  local?: DesktopLibrary | undefined;
  error?: ZoteusError | undefined;
}

const keyHint = (): string => `set ZOTERO_API_KEY${onlyOn('cli', ' (or ZOT_API_KEY)')}`;

function describeDesktop(state: DesktopState): string {
  return `${state.localApi.detail} ${state.sqlite.detail}`;
}

/** Whether the desktop holds the addressed library, and which one of its libraries it is. */
export async function desktopLibrary(
  deps: Deps,
  ref: LibraryRef,
): Promise<{ lib: DesktopLibrary; label: string; why: string } | { why: string; userId?: number }> {
  const d = await desktop(deps);
  const libraries = await d.libraries();
  if (ref.type === 'group') {
    const lib = libraries.find((l) => l.type === 'group' && l.id === ref.id);
    if (lib)
      return { lib, label: `groups/${lib.id}`, why: `the desktop app holds group ${lib.id} (${lib.name})` };
    // An id given alone is read as a group's: the user's own id, given so, is a likely slip.
    const mine = libraries.some((l) => l.type === 'user' && l.id === ref.id && l.id > 0);
    return {
      why: `group ${ref.id} is not in the desktop app's Zotero (${mine ? `${ref.id} is the id of your own user library` : 'not joined, or not synced to this computer'})`,
      ...(mine && ref.id !== null ? { userId: ref.id } : {}),
    };
  }
  const own = libraries.find((l) => l.type === 'user');
  if (!own) return { why: "the desktop app's Zotero has no personal library" };
  const account = await d.account();
  const signedIn = account !== undefined && account > 0;
  if (ref.source === 'desktop') {
    return {
      lib: own,
      label: `users/${signedIn ? account : 0}`,
      why: 'no API key and no library are configured: the default library is the desktop app’s personal library',
    };
  }
  if (ref.id !== null) {
    if (signedIn && account === ref.id)
      return { lib: own, label: `users/${account}`, why: `the desktop app is signed in as user ${account}` };
    return {
      why: signedIn
        ? `the desktop app is signed in as user ${account}, not ${ref.id}`
        : account === 0
          ? `the desktop app is signed in to no Zotero account, so its library is not users/${ref.id}`
          : `the desktop app's account could not be told, so its library is not known to be users/${ref.id}`,
    };
  }
  // The key's own user library.
  const keyUser = await knownKeyUser(deps);
  if (keyUser !== undefined && signedIn) {
    return keyUser === account
      ? {
          lib: own,
          label: `users/${account}`,
          why: `the desktop app is signed in as the API key's user (${account})`,
        }
      : {
          why: `the desktop app is signed in as user ${account}, but the API key belongs to user ${keyUser}`,
        };
  }
  if (account === 0) {
    return { why: "the desktop app is signed in to no Zotero account, so its library is not the API key's" };
  }
  return {
    lib: own,
    label: `users/${signedIn ? account : (keyUser ?? 0)}`,
    why: signedIn
      ? `the desktop app is signed in as user ${account}, assumed to be the API key's user (not checked yet)`
      : "the desktop app's personal library is assumed to be the API key's user library",
  };
}

async function webPlan(deps: Deps, ref: LibraryRef, reason: string): Promise<RoutePlan> {
  let library: string;
  if (ref.id !== null) library = libraryPrefix({ type: ref.type, id: ref.id });
  else {
    // The key's own library: its id is known once a key check has been made.
    const user = ref.source === 'desktop' ? 0 : await knownKeyUser(deps);
    library = user === undefined ? describeLibrary(ref) : `users/${user}`;
  }
  if (deps.config.apiKey === undefined) {
    return { library, backend: null, reason, error: authMissing(deps.config) };
  }
  return { library, backend: 'web', reason };
}

/**
 * Where the reads of an addressed library go, without opening a reader (what
 * `openLibraryReader` does first, and what `zotero_whoami` reports). Detects the desktop
 * (once per deps) unless `ZOTEUS_LOCAL=off`; never asks the Web API.
 */
export async function planRoute(
  deps: Deps,
  ref: LibraryRef,
  options: { prefer?: BackendName | undefined } = {},
): Promise<RoutePlan> {
  const mode = deps.config.local;
  if (mode === 'off') {
    return await webPlan(deps, ref, 'ZOTEUS_LOCAL=off: the Web API serves every library.');
  }
  const d = await desktop(deps);
  const state = await d.state();
  if (!state.available) {
    if (mode === 'on') {
      const plan = await webPlan(deps, ref, '');
      return {
        library: plan.library,
        backend: null,
        reason: `ZOTEUS_LOCAL=on, but the Zotero desktop app's data is not available: ${describeDesktop(state)}`,
        error: new ZoteusError(
          'not_found',
          `ZOTEUS_LOCAL=on requires the Zotero desktop app's data, and none is available. Looked for the local API: ${state.localApi.detail} Looked for zotero.sqlite: ${state.sqlite.detail}`,
          {
            hint:
              state.localApi.state === 'disabled'
                ? `${ENABLE_LOCAL_API_HINT} Or set ZOTERO_DATA_DIR to the Zotero data directory, or ZOTEUS_LOCAL=auto to fall back to the Web API.`
                : 'Start Zotero (7 or later, local API enabled), or set ZOTERO_DATA_DIR to the Zotero data directory (Zotero → Settings → Advanced → Files and Folders shows it), or set ZOTEUS_LOCAL=auto to fall back to the Web API.',
          },
        ),
      };
    }
    const plan = await webPlan(
      deps,
      ref,
      `No Zotero desktop data is available (${describeDesktop(state)}): the Web API serves it.`,
    );
    if (plan.error && ref.source === 'desktop') {
      plan.error = new ZoteusError(
        'auth_missing',
        'No Zotero API key is configured and no Zotero desktop data was found, so there is no library to read.',
        {
          hint: `Start Zotero 7+ with its local API enabled, or set ZOTERO_DATA_DIR to the Zotero data directory (${state.sqlite.detail}); or ${keyHint()} to read the library through the Web API.`,
        },
      );
    }
    return plan;
  }

  const held = await desktopLibrary(deps, ref);
  if (!('lib' in held)) {
    const plan = await webPlan(deps, ref, `Not on the desktop: ${held.why}; the Web API serves it.`);
    if (plan.error) {
      plan.error = new ZoteusError(
        'not_found',
        `${ref.type === 'group' ? `Group ${ref.id}` : `Library ${plan.library}`} cannot be read: ${held.why}, and no Zotero API key is configured to read it from the Web API.`,
        {
          field: ref.source === 'argument' ? 'library_id' : undefined,
          hint:
            'userId' in held && held.userId !== undefined
              ? `An id given alone names a group: add ${paramRef('library_type', 'user')} to read your own library, or leave out ${paramRef('library_id')} (it is the default).`
              : ref.type === 'group'
                ? `Join and sync the group in Zotero, or ${keyHint()} to read it from the Web API.`
                : `Omit the library to read the desktop's own library, or ${keyHint()}.`,
        },
      );
    }
    return plan;
  }

  const { lib, label, why } = held;
  const matches = (library: string): boolean =>
    library === label || (label === 'users/0' && lib.type === 'user' && library.startsWith('users/'));
  const pending = await pendingWrite(deps, matches);
  if (pending && deps.config.apiKey !== undefined) {
    const local = await localVersion(deps, state, lib);
    if (local === undefined || local < pending.write.version) {
      return {
        library: pending.library,
        backend: 'web',
        reason: `Written through the Web API in this session (library version ${pending.write.version}); the desktop's copy is ${local === undefined ? 'of unknown version' : `at version ${local}`} until Zotero syncs, so reads stay on the Web API.`,
      };
    }
    (await recentWrites(deps)).delete(pending.library);
  }

  // A library the desktop wrote in this process is read where the write is: its local API.
  if (options.prefer !== undefined && state.localApi.available) {
    const { desktopWritten } = await import('./write-route.js');
    if (await desktopWritten(deps, localApiPrefix(lib))) {
      return {
        library: label,
        backend: 'localApi',
        local: lib,
        reason: `Written through the desktop app's local API in this session, so read there (${why}).`,
      };
    }
  }
  if (options.prefer === 'web' && deps.config.apiKey !== undefined) {
    return { library: label, backend: 'web', reason: `The Web API was asked for (${why}).` };
  }
  const sqliteOk = state.sqlite.available && lib.libraryID !== undefined;
  if (state.localApi.available && !(options.prefer === 'sqlite' && sqliteOk)) {
    return {
      library: label,
      backend: 'localApi',
      local: lib,
      reason: `The desktop app's local API answers (${state.localApi.url}) and ${why}.`,
    };
  }
  if (sqliteOk) {
    return {
      library: label,
      backend: 'sqlite',
      local: lib,
      reason:
        options.prefer === 'sqlite' && state.localApi.available
          ? `zotero.sqlite was asked for (${state.sqlite.path}), and ${why}.`
          : `Reading zotero.sqlite (${state.sqlite.path}) since the local API is not in use (${state.localApi.detail}), and ${why}.`,
    };
  }
  // The desktop holds it, yet neither local backend can read it (a group seen only through a
  // local API that stopped answering): the Web API, when there is a key.
  return await webPlan(
    deps,
    ref,
    `The desktop app cannot read it now (${describeDesktop(state)}): the Web API serves it.`,
  );
}

/**
 * The name of the library a call addresses as its reads name it (`users/123`, `groups/4`), from
 * the route the router would take: never a request to the Web API. Undefined when no route
 * can tell (the message then names no library).
 */
export async function addressedLibrary(deps: Deps, args: LibraryArgs): Promise<string | undefined> {
  try {
    const plan = await planRoute(deps, resolveLibrary(args, deps.config));
    return plan.library || undefined;
  } catch {
    return undefined;
  }
}

async function localVersion(
  deps: Deps,
  state: DesktopState,
  lib: DesktopLibrary,
): Promise<number | undefined> {
  try {
    if (state.sqlite.reader && lib.libraryID !== undefined)
      return await state.sqlite.reader.libraryVersion(lib.libraryID);
    if (state.localApi.available) return await (await localApiReader(deps, state, lib)).libraryVersion();
  } catch (error) {
    deps.log.debug(`Could not read the desktop's library version: ${(error as Error).message}`);
  }
  return undefined;
}

/**
 * The readers over the Web API client (the local API's and the Web API's) load when a route
 * takes them: a read of zotero.sqlite loads neither them nor the client.
 */
async function localApiReader(deps: Deps, state: DesktopState, lib: DesktopLibrary): Promise<LibraryReader> {
  const { createLocalApiReader } = await import('./readers/local-api.js');
  return createLocalApiReader({
    api: state.api,
    library: { type: lib.type, id: lib.id },
    maxCollections: deps.config.maxCollections,
  });
}

/**
 * The one entry point of read tools: the reader of the addressed library on the backend the
 * router picks (see the module comment), and the route it took. `prefer` picks a backend when
 * it can serve the library (a tool that needs zotero.sqlite's full text, say); it never
 * overrides ZOTEUS_LOCAL=off or read-your-writes.
 *
 * Throws `validation_error` for a bad address, `auth_missing` when only the Web API could
 * serve the library and no key is configured, `not_found` when ZOTEUS_LOCAL=on finds no
 * desktop data or a library is in neither place, and the Web API's own refusals
 * (`auth_invalid`, `permission_denied`) when it serves the library.
 */
export async function openLibraryReader(
  deps: Deps,
  args: LibraryArgs,
  options: { prefer?: BackendName } = {},
): Promise<OpenedReader> {
  const ref = resolveLibrary(args, deps.config);
  const plan = await planRoute(deps, ref, options);
  if (plan.backend === null) throw plan.error ?? authMissing(deps.config);
  if (plan.backend === 'web') {
    const { openWebReader } = await import('./readers/web.js');
    const { reader, lib } = await openWebReader(deps, args);
    return { reader, route: { backend: 'web', reason: plan.reason, library: lib.prefix } };
  }
  const lib = plan.local;
  if (!lib)
    throw new ZoteusError(
      'internal_error',
      'Internal error in Zoteus (a desktop route without its library).',
    );
  const state = await (await desktop(deps)).state();
  const route: LibraryRoute = { backend: plan.backend, reason: plan.reason, library: plan.library };
  if (plan.backend === 'localApi') return { reader: await localApiReader(deps, state, lib), route };
  const sqlite = state.sqlite.reader;
  if (!sqlite || lib.libraryID === undefined) {
    throw new ZoteusError(
      'internal_error',
      'Internal error in Zoteus (a zotero.sqlite route without the database).',
    );
  }
  const reader = createSqliteReader({
    sqlite,
    libraryID: lib.libraryID,
    library: { type: lib.type, id: lib.id },
    maxCollections: deps.config.maxCollections,
    index: {
      dataDir: deps.config.dataDir,
      autoMinItems: deps.config.indexAutoMinItems,
      progress: deps.progress,
      env: deps.env,
    },
  });
  return { reader, route };
}

// ---------------------------------------------------------------------------------------------
// What zotero_whoami reports

export interface BackendsReport {
  localApi: {
    configured: boolean;
    available: boolean | null;
    url: string;
    detail: string;
    state?: LocalApiState;
    hint?: string;
  };
  sqlite: {
    configured: boolean;
    available: boolean | null;
    path: string | null;
    schemaVersion: number | null;
    mode: 'direct' | 'snapshot' | null;
    detail: string;
    error?: { code: string; message: string };
  };
  /** The default library first, then every library the desktop holds. */
  libraries: Array<{
    library: string;
    name: string;
    backend: BackendName | null;
    reason: string;
    error?: { code: string; message: string };
  }>;
}

/**
 * The desktop backends as detected now and the route of the default library and of every
 * library the desktop holds. Sends nothing to the Web API (the key's user is known from a key
 * check made before, as whoami does).
 */
export async function describeBackends(deps: Deps, defaultName?: string): Promise<BackendsReport> {
  const url = localApiUrl(deps.env);
  const defaultRef = resolveLibrary({}, deps.config);
  const libraries: BackendsReport['libraries'] = [];
  const add = (plan: RoutePlan, name: string): void => {
    if (libraries.some((l) => l.library === plan.library && l.backend === plan.backend)) return;
    libraries.push({
      library: plan.library,
      name,
      backend: plan.backend,
      reason: plan.backend === null && plan.error ? plan.error.message : plan.reason,
      ...(plan.error ? { error: { code: plan.error.code, message: plan.error.message } } : {}),
    });
  };
  const defaultPlan = (ref: LibraryRef) =>
    planRoute(deps, ref).catch(
      (error: unknown) =>
        ({
          library: 'users/0',
          backend: null,
          reason: (error as Error).message,
        }) as RoutePlan,
    );

  if (deps.config.local === 'off') {
    const off = 'ZOTEUS_LOCAL=off: the desktop app is not used.';
    add(await defaultPlan(defaultRef), defaultName ?? 'default library');
    return {
      localApi: { configured: false, available: null, url, detail: off },
      sqlite: {
        configured: false,
        available: null,
        path: null,
        schemaVersion: null,
        mode: null,
        detail: off,
      },
      libraries,
    };
  }
  const d = await desktop(deps);
  const state = await d.state();
  const plan = await defaultPlan(defaultRef);
  const held = state.available ? await d.libraries() : [];
  const own = held.find((l) => l.type === 'user');
  add(plan, defaultName ?? (defaultRef.source === 'desktop' && own ? own.name : 'default library'));
  for (const lib of held) {
    const ref: LibraryRef =
      lib.type === 'group'
        ? { type: 'group', id: lib.id, source: 'argument' }
        : { type: 'user', id: null, source: deps.config.apiKey === undefined ? 'desktop' : 'key' };
    if (
      lib.type === 'user' &&
      deps.config.apiKey !== undefined &&
      deps.config.libraryType === 'user' &&
      deps.config.libraryId !== undefined
    ) {
      ref.id = deps.config.libraryId;
      ref.source = 'config';
    }
    add(await defaultPlan(ref), lib.name);
  }
  const s = state.sqlite;
  return {
    localApi: {
      configured: true,
      available: state.localApi.available,
      url,
      detail: state.localApi.detail,
      state: state.localApi.state,
      ...(state.localApi.hint ? { hint: state.localApi.hint } : {}),
    },
    sqlite: {
      configured: true,
      available: s.available,
      path: s.path ?? null,
      schemaVersion: s.schemaVersion ?? null,
      mode: s.mode ?? null,
      detail: s.detail,
      ...(s.error ? { error: { code: s.error.code, message: s.error.message } } : {}),
    },
    libraries,
  };
}
