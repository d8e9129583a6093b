/**
 * Multi-object reads and writes, 50 objects per request as the API demands: reads by key and
 * writes with per-object versions in parallel (the client's in-flight bound limits them; a
 * chunk naming a parent in another chunk waits for it), writes under a library version and
 * deletes one chunk after another (each carries the library version the previous one
 * produced), results mapped back to the caller's input indexes.
 */
import { outcomeUnknown, ZoteusError } from '../errors.js';
import { failedByError, failedEntry } from './errors.js';
import type { Http } from './http.js';
import type {
  CallContext,
  DeleteBatchResult,
  FailedEntry,
  GetByKeysResult,
  ObjectKind,
  WriteBatchOptions,
  WriteBatchResult,
  ZoteroObject,
} from './types.js';

export const BATCH_SIZE = 50;
/** Rounds of fetch-version-then-delete when another client writes in between. */
const DELETE_ROUNDS = 3;

const KEY_PARAM: Record<ObjectKind, string> = {
  collections: 'collectionKey',
  items: 'itemKey',
  searches: 'searchKey',
};

export function chunk<T>(list: readonly T[], size: number = BATCH_SIZE): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** `users/1` from `users/1`, `/users/1/`: paths are built as `/${library}/${kind}`. */
export function normalizeLibrary(library: string): string {
  const clean = library.replace(/^\/+|\/+$/g, '');
  if (!/^(users|groups)\/\d+$/.test(clean)) {
    throw new ZoteusError(
      'validation_error',
      `'${clean}' is not a library prefix (users/<id> or groups/<id>).`,
      { field: 'library' },
    );
  }
  return clean;
}

function malformed(http: Http, what: string, status: number): ZoteusError {
  return new ZoteusError(
    'api_error',
    http.redact(`The Zotero API answered ${what} with an unexpected body.`),
    {
      status,
      hint: 'Check ZOTERO_API_URL: it should point at a Zotero Web API v3 server.',
    },
  );
}

export async function getByKeys<T = ZoteroObject>(
  http: Http,
  library: string,
  kind: ObjectKind,
  keys: readonly string[],
  options: { call?: CallContext | undefined } = {},
): Promise<GetByKeysResult<T>> {
  const call = options.call ?? http.newCall();
  const lib = normalizeLibrary(library);
  const unique = [...new Set(keys)];
  const wanted = new Set(unique);
  const responses = await Promise.all(
    chunk(unique).map((part) =>
      http.request('GET', `/${lib}/${kind}`, {
        // By key means whatever exists: an object in the trash is still there to change.
        query: {
          [KEY_PARAM[kind]]: part.join(','),
          limit: BATCH_SIZE,
          includeTrashed: kind === 'searches' ? undefined : 1,
        },
        call,
      }),
    ),
  );
  const byKey = new Map<string, T>();
  let libraryVersion: number | undefined;
  for (const response of responses) {
    if (!Array.isArray(response.data)) throw malformed(http, `GET /${lib}/${kind}`, response.status);
    for (const object of response.data as Array<{ key?: unknown }>) {
      if (typeof object?.key === 'string' && wanted.has(object.key)) byKey.set(object.key, object as T);
    }
    if (response.lastModifiedVersion !== undefined)
      libraryVersion = Math.max(libraryVersion ?? 0, response.lastModifiedVersion);
  }
  return {
    objects: unique.filter((k) => byKey.has(k)).map((k) => byKey.get(k) as T),
    byKey,
    missing: unique.filter((k) => !byKey.has(k)),
    libraryVersion,
  };
}

interface WriteAnswer {
  successful?: Record<string, { key?: string } & Record<string, unknown>>;
  success?: Record<string, string>;
  unchanged?: Record<string, string>;
  failed?: Record<string, { key?: string; code?: number; message?: string }>;
}

/** Failure entries for objects whose request never got a per-object answer. */
function failAll(indexes: number[], keyAt: (i: number) => string | undefined, error: unknown): FailedEntry[] {
  return indexes.map((index) => failedByError(index, keyAt(index), error));
}

/** Fields by which an object names another of its kind, which must exist before it is written. */
const PARENT_FIELD: Record<ObjectKind, string | undefined> = {
  collections: 'parentCollection',
  items: 'parentItem',
  searches: undefined,
};

/**
 * For each chunk, the earlier chunks it must wait for: those holding an object it names as its
 * parent (Zotero refuses a child whose parent is not there yet), or an object it writes again.
 */
export function chunkDependencies(
  kind: ObjectKind,
  objects: ReadonlyArray<Record<string, unknown>>,
  parts: readonly number[][],
): number[][] {
  const field = PARENT_FIELD[kind];
  const chunkOf = new Map<string, number>();
  return parts.map((indexes, c) => {
    const needs = new Set<number>();
    for (const i of indexes) {
      const object = objects[i] ?? {};
      for (const named of [object.key, field === undefined ? undefined : object[field]]) {
        const at = typeof named === 'string' ? chunkOf.get(named) : undefined;
        if (at !== undefined && at !== c) needs.add(at);
      }
    }
    for (const i of indexes) {
      const key = objects[i]?.key;
      if (typeof key === 'string' && !chunkOf.has(key)) chunkOf.set(key, c);
    }
    return [...needs].sort((a, b) => a - b);
  });
}

/** Thrown by `beforeSend` of a chunk whose batch stopped: that chunk was never sent. */
export class NotStarted extends Error {}

/** How a batch's chunks ended (`runChunkWaves`). */
export interface ChunkWaves {
  /** The chunk ran to its end. */
  done: boolean[];
  /** The chunk was sent (a chunk stopped before sending is not). */
  started: boolean[];
  /** The chunk's own failure, if it failed. */
  errors: unknown[];
  /** The first failure: no chunk was sent after it. */
  stopped: { error: unknown } | undefined;
}

/**
 * Runs the chunks of one batch at once (the client's in-flight bound lets as many through as
 * it allows), a chunk that needs others (`needs`: their indexes, chunkDependencies) once they
 * are done; after a failure no further chunk is sent. `run` gets the check its request calls
 * once it holds its slot, just before it goes out (throwing NotStarted after a failure).
 */
export async function runChunkWaves(
  needs: readonly (readonly number[])[],
  run: (c: number, beforeSend: () => void) => Promise<void>,
): Promise<ChunkWaves> {
  const done = needs.map(() => false);
  const started = needs.map(() => false);
  const errors: unknown[] = needs.map(() => undefined);
  let stopped: { error: unknown } | undefined;
  const beforeSend = (): void => {
    if (stopped) throw new NotStarted();
  };
  await new Promise<void>((resolve) => {
    let running = 0;
    const launch = (): void => {
      for (let c = 0; c < needs.length && !stopped; c++) {
        if (started[c] || !(needs[c] as readonly number[]).every((d) => done[d])) continue;
        started[c] = true;
        running++;
        void run(c, beforeSend)
          .then(
            () => {
              done[c] = true;
            },
            (error: unknown) => {
              if (error instanceof NotStarted) started[c] = false;
              else {
                errors[c] = error;
                stopped ??= { error };
              }
            },
          )
          .finally(() => {
            running--;
            launch();
          });
      }
      if (running === 0) resolve();
    };
    launch();
  });
  return { done, started, errors, stopped };
}

/**
 * Writes the objects, 50 a request. Without a library version precondition the chunks go at
 * once, as many as the client's in-flight bound lets through, except that a chunk naming a
 * parent another chunk writes waits for that chunk's answer. With one, they go one after
 * another, each carrying the version the previous one produced. If no chunk was answered, the
 * first failure is thrown; otherwise a failed chunk's objects are reported failed, and after a
 * failure no further chunk is sent (its objects are reported failed with that error).
 */
export async function writeBatch<T = ZoteroObject>(
  http: Http,
  library: string,
  kind: ObjectKind,
  objects: ReadonlyArray<Record<string, unknown>>,
  options: WriteBatchOptions = {},
): Promise<WriteBatchResult<T>> {
  const call = options.call ?? http.newCall();
  const lib = normalizeLibrary(library);
  const result: WriteBatchResult<T> = {
    successful: [],
    unchanged: [],
    failed: [],
    libraryVersion: undefined,
  };
  const keyAt = (i: number): string | undefined => {
    const key = objects[i]?.key;
    return typeof key === 'string' ? key : undefined;
  };
  // Every object carries its key: a create without one could land twice when its answer is lost.
  const keyless = objects.findIndex((_, i) => keyAt(i) === undefined);
  if (keyless >= 0) {
    throw new ZoteusError(
      'internal_error',
      `Internal error in Zoteus (object ${keyless} of a write to ${kind} has no key; creates go through createObjects).`,
    );
  }
  if (options.writeToken !== undefined && objects.length > BATCH_SIZE) {
    throw new ZoteusError(
      'internal_error',
      'Internal error in Zoteus (one write token for several requests).',
    );
  }
  const parts = chunk(objects.map((_, i) => i));
  const send = async (indexes: number[], version: number | undefined, beforeSend?: () => void) => {
    const response = await http.request<WriteAnswer>('POST', `/${lib}/${kind}`, {
      body: indexes.map((i) => objects[i]),
      writeToken: options.writeToken,
      ifUnmodifiedSinceVersion: version,
      call,
      beforeSend: () => {
        options.beforeSend?.();
        beforeSend?.();
      },
    });
    if (response.data === null || typeof response.data !== 'object')
      throw malformed(http, `POST /${lib}/${kind}`, response.status);
    if (response.lastModifiedVersion !== undefined)
      result.libraryVersion = Math.max(result.libraryVersion ?? 0, response.lastModifiedVersion);
    return { answer: response.data, version: response.lastModifiedVersion };
  };
  const collect = (indexes: number[], answer: WriteAnswer): void =>
    collectAnswer(http, result, indexes[0] as number, answer, keyAt);

  if (options.ifUnmodifiedSinceVersion !== undefined || parts.length <= 1) {
    // One library version travels from chunk to chunk: one request at a time.
    let version = options.ifUnmodifiedSinceVersion;
    for (let c = 0; c < parts.length; c++) {
      const indexes = parts[c] as number[];
      let answer: WriteAnswer;
      try {
        const sent = await send(indexes, version);
        answer = sent.answer;
        // Our own chunk moved the library version: the next chunk's precondition follows it.
        if (sent.version !== undefined && version !== undefined) version = sent.version;
      } catch (error) {
        // Nothing landed yet: the caller gets the error itself. Otherwise report what did not land.
        if (c === 0) throw error;
        result.failed.push(...failAll(parts.slice(c).flat(), keyAt, error));
        break;
      }
      collect(indexes, answer);
    }
  } else {
    const answers: Array<WriteAnswer | undefined> = parts.map(() => undefined);
    const { started, errors, stopped } = await runChunkWaves(
      chunkDependencies(kind, objects, parts),
      async (c, beforeSend) => {
        answers[c] = (await send(parts[c] as number[], undefined, beforeSend)).answer;
      },
    );
    // Nothing was answered: as with one request, the failure is the caller's; one whose chunk
    // may have landed (no answer) first, so that the caller reads before it judges.
    if (stopped && answers.every((a) => a === undefined)) {
      const unknown = errors.find((e) => e instanceof ZoteusError && outcomeUnknown(e));
      throw unknown ?? stopped.error;
    }
    parts.forEach((indexes, c) => {
      const answer = answers[c];
      if (answer !== undefined) collect(indexes, answer);
      else result.failed.push(...failAll(indexes, keyAt, started[c] ? errors[c] : stopped?.error));
    });
  }
  const byIndex = (a: { index: number }, b: { index: number }): number => a.index - b.index;
  result.successful.sort(byIndex);
  result.unchanged.sort(byIndex);
  result.failed.sort(byIndex);
  return result;
}

/** One chunk's per-object answer, mapped back to the caller's indexes (the chunk starts at `offset`). */
function collectAnswer<T>(
  http: Http,
  result: WriteBatchResult<T>,
  offset: number,
  answer: WriteAnswer,
  keyAt: (i: number) => string | undefined,
): void {
  const seen = new Set<number>();
  for (const [i, object] of Object.entries(answer.successful ?? {})) {
    const index = offset + Number(i);
    const key = typeof object?.key === 'string' ? object.key : (answer.success?.[i] ?? keyAt(index) ?? '');
    result.successful.push({ index, key, object: object as T });
    seen.add(index);
  }
  for (const [i, key] of Object.entries(answer.success ?? {})) {
    const index = offset + Number(i);
    if (!seen.has(index)) result.successful.push({ index, key });
  }
  for (const [i, key] of Object.entries(answer.unchanged ?? {}))
    result.unchanged.push({ index: offset + Number(i), key });
  for (const [i, failure] of Object.entries(answer.failed ?? {})) {
    const index = offset + Number(i);
    const code = typeof failure?.code === 'number' ? failure.code : 0;
    const key = failure?.key ?? keyAt(index);
    result.failed.push(failedEntry(index, key, code, http.redact(failure?.message ?? `HTTP ${code}`)));
  }
}

/** Changes one object; answers its new version (`Last-Modified-Version`). */
export async function patchObject(
  http: Http,
  library: string,
  kind: ObjectKind,
  key: string,
  data: Record<string, unknown>,
  version: number,
  options: { call?: CallContext | undefined } = {},
): Promise<{ version: number | undefined }> {
  const lib = normalizeLibrary(library);
  const response = await http.request('PATCH', `/${lib}/${kind}/${encodeURIComponent(key)}`, {
    body: data,
    ifUnmodifiedSinceVersion: version,
    call: options.call,
  });
  return { version: response.lastModifiedVersion };
}

/** The library's current version, from the cheapest listing there is. */
async function currentVersion(
  http: Http,
  lib: string,
  kind: ObjectKind,
  call: CallContext,
): Promise<number | undefined> {
  const response = await http.request('GET', `/${lib}/${kind}`, { query: { limit: 1 }, call });
  return response.lastModifiedVersion;
}

export async function deleteBatch(
  http: Http,
  library: string,
  kind: ObjectKind,
  keys: readonly string[],
  options: { libraryVersion?: number | undefined; call?: CallContext | undefined } = {},
): Promise<DeleteBatchResult> {
  const call = options.call ?? http.newCall();
  const lib = normalizeLibrary(library);
  const unique = [...new Set(keys)];
  const indexOf = new Map<string, number>();
  keys.forEach((k, i) => {
    if (!indexOf.has(k)) indexOf.set(k, i);
  });
  const result: DeleteBatchResult = { deleted: [], failed: [], libraryVersion: options.libraryVersion };
  // A version we looked up ourselves may go stale under a concurrent writer: look again.
  const ownVersion = options.libraryVersion === undefined;
  let version =
    options.libraryVersion ?? (unique.length ? await currentVersion(http, lib, kind, call) : undefined);
  const parts = chunk(unique);
  // A DELETE carries the library version, which each chunk moves on: one chunk at a time.
  for (let c = 0; c < parts.length; c++) {
    let part = parts[c] as string[];
    try {
      for (let round = 1; ; round++) {
        try {
          const response = await http.request('DELETE', `/${lib}/${kind}`, {
            query: { [KEY_PARAM[kind]]: part.join(',') },
            ifUnmodifiedSinceVersion: version,
            call,
          });
          version = response.lastModifiedVersion ?? version;
          result.libraryVersion = version;
          result.deleted.push(...part);
          break;
        } catch (error) {
          if (round < DELETE_ROUNDS && error instanceof ZoteusError && outcomeUnknown(error)) {
            // The answer was lost: the delete may have landed. What is gone is deleted; the
            // rest is sent again with the library's current version (a DELETE is versioned).
            const read = await getByKeys(http, library, kind, part, { call });
            const gone = part.filter((k) => !read.byKey.has(k));
            result.deleted.push(...gone);
            part = part.filter((k) => read.byKey.has(k));
            version = read.libraryVersion ?? version;
            result.libraryVersion = version;
            if (part.length === 0) break;
            continue;
          }
          const retry =
            ownVersion && round < DELETE_ROUNDS && error instanceof ZoteusError && error.status === 412;
          if (!retry) throw error;
          version = await currentVersion(http, lib, kind, call);
        }
      }
    } catch (error) {
      if (c === 0) throw error;
      const rest = parts.slice(c).flat();
      result.failed.push(
        ...failAll(
          rest.map((k) => indexOf.get(k) as number),
          (i) => keys[i],
          error,
        ),
      );
      break;
    }
  }
  return result;
}
