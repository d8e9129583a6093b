/**
 * Where a write goes (`ZOTEUS_WRITES`), decided in this one place for every tool that writes
 * (`openWebLibrary` with `access: 'write'` asks here first):
 *
 * - `cloud`: the Web API, as before the desktop could take writes.
 * - `auto` (default): a library the desktop holds and can write (Zotero 10+, its local API on)
 *   goes to the desktop when a local API key is configured (ZOTEUS_LOCAL_API_KEY, or the
 *   profile's `local_api_key`); everything else goes to the Web API. Without a local key
 *   nothing is probed: the choice is the Web API's, as it always was.
 * - `desktop`: the desktop must take the write; a library it cannot write fails and says why.
 *
 * The side is chosen before anything is sent and never changes during a call: a write whose
 * answer was lost is reported, not replayed on the other side. `deps.written` (set by the
 * pipeline per call) records the side for the surfaces (`data.written_to`).
 */
import { toolRef } from '../call/refs.js';
import type { Config } from '../config.js';
import { ZoteusError } from '../errors.js';
import {
  authoriseHint,
  createLocalWriteClient,
  probeLocalWrites,
  WRITE_PROBE_RECHECK_MS,
  type LocalWriteProbe,
  type ServerIdState,
} from '../local/local-writes.js';
import { localApi, localApiUrl } from '../local/local-api.js';
import type { Deps } from '../tool.js';
import type { ZoteroClient } from '../zotero/index.js';
import { describeLibrary, libraryPrefix, localApiPrefix, type LibraryRef } from './address.js';
import type { DesktopLibrary } from './readers/desktop.js';

export type WriteSide = 'desktop' | 'cloud';

export interface WritePlan {
  /** The library as the side names it (`users/0` or `groups/N` on the desktop). */
  library: string;
  /** Null when no side can take the write (`error` says why). */
  side: WriteSide | null;
  reason: string;
  error?: ZoteusError | undefined;
  /** The desktop's library, when the desktop takes the write. */
  local?: DesktopLibrary | undefined;
  /** Why the desktop does not take it (sentences), when that is not only a missing local key. */
  desktopWhy?: string | undefined;
}

const LOCAL_WRITES_SERVICE = 'zotero-local-writes';

export interface LocalWrites {
  url: string;
  /** The `Zotero-Server-ID` seen last (probe or write). */
  server: ServerIdState;
  /** The write probe: once per deps, again after 30 s in a server, or after `forget()`. */
  probe(): Promise<LocalWriteProbe>;
  forget(): void;
  /** The write client with the configured local key (one per deps). */
  client(key: string): ZoteroClient;
}

/** The local-API write state of these deps. */
export function localWrites(deps: Deps): Promise<LocalWrites> {
  return deps.services.get<LocalWrites>(LOCAL_WRITES_SERVICE, () => {
    const url = localApiUrl(deps.env);
    const server: ServerIdState = { id: undefined };
    let last: LocalWriteProbe | undefined;
    let pending: Promise<LocalWriteProbe> | undefined;
    let client: { key: string; client: ZoteroClient } | undefined;
    const self: LocalWrites = {
      url,
      server,
      probe: () => {
        const now = deps.clock.now();
        if (last && now >= last.checkedAt && now - last.checkedAt < WRITE_PROBE_RECHECK_MS)
          return Promise.resolve(last);
        pending ??= probeLocalWrites({ url, now: () => deps.clock.now() })
          .then((found) => {
            last = found;
            if (found.serverId !== undefined) server.id = found.serverId;
            deps.log.debug(`local API writes: ${found.state} (${found.detail})`);
            return found;
          })
          .finally(() => {
            pending = undefined;
          });
        return pending;
      },
      forget: () => {
        last = undefined;
      },
      client: (key) => {
        if (client?.key !== key) {
          client = {
            key,
            client: createLocalWriteClient(deps, {
              url,
              key,
              server,
              onServerChange: () => {
                // Another database: what was detected of the old one (its libraries) is stale.
                self.forget();
                void localApi(deps).then((api) => api.forget());
              },
            }),
          };
        }
        return client.client;
      },
    };
    return self;
  });
}

/**
 * Reads of a library the desktop wrote go to its local API (read-your-writes): in this
 * process, and in the CLI invocations of the next ten minutes (local/desktop-writes.ts).
 */
export async function noteDesktopWrite(deps: Deps, library: string): Promise<void> {
  const { recordDesktopWrite } = await import('../local/desktop-writes.js');
  await recordDesktopWrite(deps, library);
}

export async function desktopWritten(deps: Deps, library: string): Promise<boolean> {
  const { wasDesktopWritten } = await import('../local/desktop-writes.js');
  return wasDesktopWritten(deps, library);
}

function mode(config: Config): 'auto' | 'desktop' | 'cloud' {
  return config.writes ?? 'auto';
}

function cloudName(ref: LibraryRef): string {
  return ref.id === null ? describeLibrary(ref) : libraryPrefix({ type: ref.type, id: ref.id });
}

/** The refusal of a resumed request whose side (the desktop) cannot take it now. */
function sideChanged(why: string): ZoteusError {
  return new ZoteusError(
    'conflict',
    `An earlier attempt of this request (its idempotency key) wrote through the Zotero desktop app, and the desktop cannot take it now (${why}): it is not sent to the Web API instead, where it could land twice.`,
    {
      retryable: true,
      hint: `Retry with the same idempotency key once the desktop app takes writes again (${toolRef('zotero_whoami')} says where writes go), or use a new key to start over.`,
    },
  );
}

/**
 * Which side takes the writes of a library, and why. `probe: true` (whoami) looks at the
 * desktop even without a local key, to say what authorising would give. A resumed request
 * keeps the side its idempotency record names (`deps.writeIds.side`).
 */
export async function planWrites(
  deps: Deps,
  ref: LibraryRef,
  options: { probe?: boolean } = {},
): Promise<WritePlan> {
  const plan = await chooseSide(deps, ref, options);
  if (deps.writeIds.side?.pinned === 'desktop' && plan.side !== 'desktop' && !options.probe) {
    return { ...plan, side: null, error: plan.error ?? sideChanged(plan.reason) };
  }
  if (
    options.probe &&
    plan.side !== 'desktop' &&
    mode(deps.config) !== 'desktop' &&
    deps.config.apiKey === undefined
  ) {
    return nowhere(plan, deps);
  }
  return plan;
}

/**
 * What whoami says of a library no side can write: no Web API key, and the desktop cannot
 * take it either (`plan.desktopWhy`), or takes it only once a person authorises Zoteus.
 */
function nowhere(plan: WritePlan, deps: Deps): WritePlan {
  const noWebKey = 'no ZOTERO_API_KEY is set for the Web API';
  const noLocalKey = deps.config.localApiKey === undefined;
  let reason: string;
  if (mode(deps.config) === 'cloud') {
    reason = `Writes cannot go anywhere yet: ZOTEUS_WRITES=cloud sends them to the Web API, and no ZOTERO_API_KEY is set.`;
  } else if (plan.desktopWhy === undefined) {
    reason = `Writes cannot go anywhere yet: ${noWebKey}, and no local API key is configured for the desktop app, which takes writes (Zotero 10+) once a person authorises Zoteus. ${authoriseHint()}`;
  } else {
    reason = `Writes cannot go anywhere yet: ${noWebKey}, and the desktop app cannot take them. ${upperFirst(plan.desktopWhy)}${
      noLocalKey ? ` Then it also needs a key. ${authoriseHint()}` : ''
    }`;
  }
  return { library: plan.library, side: null, reason };
}

function upperFirst(text: string): string {
  return `${text[0]?.toUpperCase() ?? ''}${text.slice(1)}`;
}

async function chooseSide(deps: Deps, ref: LibraryRef, options: { probe?: boolean }): Promise<WritePlan> {
  const writes = mode(deps.config);
  const library = cloudName(ref);
  const cloud = (reason: string, desktopWhy?: string): WritePlan => ({
    library,
    side: 'cloud',
    reason,
    ...(desktopWhy !== undefined ? { desktopWhy } : {}),
  });
  const refuse = (error: ZoteusError, reason = error.message): WritePlan => ({
    library,
    side: null,
    reason,
    error,
  });
  // A resumed request (its idempotency record) stays on the side its first attempt chose.
  const pinned = deps.writeIds.side?.pinned;
  if (pinned === 'cloud') {
    return cloud(
      'An earlier attempt of this request (its idempotency key) wrote through the Web API: it resumes there.',
    );
  }
  if (writes === 'cloud') {
    if (pinned === 'desktop') return refuse(sideChanged('ZOTEUS_WRITES=cloud'));
    return cloud('ZOTEUS_WRITES=cloud: writes go to the Web API.');
  }
  if (deps.config.local === 'off') {
    if (writes === 'desktop') {
      return refuse(
        new ZoteusError(
          'validation_error',
          'ZOTEUS_WRITES=desktop sends writes to the Zotero desktop app, and ZOTEUS_LOCAL=off turns the desktop app off.',
          { field: 'ZOTEUS_WRITES', hint: 'Unset ZOTEUS_LOCAL, or set ZOTEUS_WRITES=auto or cloud.' },
        ),
      );
    }
    return cloud(
      'ZOTEUS_LOCAL=off: the desktop app is not used, so writes go to the Web API.',
      'ZOTEUS_LOCAL=off turns the desktop app off.',
    );
  }
  const key = deps.config.localApiKey;
  if (writes === 'auto' && key === undefined && !options.probe) {
    return cloud(
      'No local API key is configured (ZOTEUS_LOCAL_API_KEY, or the profile’s local_api_key), so writes go to the Web API.',
    );
  }
  const local = await localWrites(deps);
  const probe = await local.probe();
  if (probe.state !== 'writable') {
    if (writes === 'desktop') {
      return refuse(
        new ZoteusError(
          'not_found',
          `ZOTEUS_WRITES=desktop, but the Zotero desktop app cannot take writes: ${probe.detail}`,
          { hint: `${probe.hint ?? ''} Or set ZOTEUS_WRITES=auto to write through the Web API.`.trim() },
        ),
      );
    }
    return cloud(
      `${probe.detail} Writes go to the Web API.`,
      `${probe.detail}${probe.hint ? ` ${probe.hint}` : ''}`,
    );
  }
  // Which of the desktop's libraries this is (the router's rule for reads).
  const { desktopLibrary } = await import('./router.js');
  const held = await desktopLibrary(deps, ref);
  if (!('lib' in held)) {
    if (writes === 'desktop') {
      return refuse(
        new ZoteusError(
          'not_found',
          `ZOTEUS_WRITES=desktop, but ${held.why}, so the desktop app cannot write it.`,
          {
            ...(ref.source === 'argument' ? { field: 'library_id' } : {}),
            hint: 'Write a library the desktop app holds, or set ZOTEUS_WRITES=auto to write through the Web API.',
          },
        ),
      );
    }
    return cloud(`Not on the desktop: ${held.why}; writes go to the Web API.`, `${held.why}.`);
  }
  if (held.lib.editable === false) {
    const why = `${held.why}, but Zotero does not let this account edit it (a group where you may only read)`;
    if (writes === 'desktop') {
      return refuse(
        new ZoteusError('permission_denied', `ZOTEUS_WRITES=desktop, and ${why}.`, {
          ...(ref.source === 'argument' ? { field: 'library_id' } : {}),
          hint: "Ask the group's owner for write access, or write to another library.",
        }),
      );
    }
    return cloud(`${why[0]?.toUpperCase()}${why.slice(1)}: writes go to the Web API.`, `${why}.`);
  }
  if (key === undefined) {
    const why = 'the desktop app can take writes (Zotero 10+), but no local API key is configured';
    if (writes === 'desktop' || deps.config.apiKey === undefined) {
      return refuse(
        new ZoteusError(
          'auth_missing',
          `No key of the Zotero desktop app's local API is configured, and this write needs one (${why}).`,
          {
            hint: `${authoriseHint()}${writes === 'auto' ? ' Or set ZOTERO_API_KEY to write through the Web API.' : ''}`,
          },
        ),
        `${why}.`,
      );
    }
    return cloud(`${why[0]?.toUpperCase()}${why.slice(1)}: writes go to the Web API.`);
  }
  const prefix = localApiPrefix({ type: held.lib.type, id: held.lib.id });
  return {
    library: prefix,
    side: 'desktop',
    local: held.lib,
    reason: `The desktop app takes writes through its local API (${probe.url}) and ${held.why}.`,
  };
}

/** The desktop's write client for a planned desktop write. */
export async function desktopWriteClient(deps: Deps): Promise<ZoteroClient> {
  const key = deps.config.localApiKey;
  if (key === undefined) {
    throw new ZoteusError('internal_error', 'Internal error in Zoteus (a desktop write without a key).');
  }
  return (await localWrites(deps)).client(key);
}
