/**
 * Creating objects so that no attempt lands twice (issue: "a retried create never lands
 * twice"). Every object gets a client-generated key and every request a write token, both
 * from the request's WriteIds, so a repeat sends the same ones. Whether an object landed is
 * decided by reading its key back, never by a token's 412 alone: Zotero counts a token as used
 * even when every object of its request failed, and forgets tokens after 12 hours.
 *
 * Per chunk of 50 (the chunks run concurrently, children after their parents' chunk): when an
 * earlier attempt may have written (`ids.resumed`), the keys are read first and only the
 * missing objects are sent; a whole-request 412 (token spent), a lost answer or a per-object
 * "already exists" is settled the same way, by reading back.
 */
import { toZoteusError, ZoteusError } from '../errors.js';
import {
  chunk,
  chunkDependencies,
  failedByError,
  failedEntry,
  NotStarted,
  reasonForCode,
  runChunkWaves,
} from '../zotero/index.js';
import type {
  CallContext,
  FailedEntry,
  WriteBatchResult,
  ZoteroClient,
  ZoteroObject,
} from '../zotero/index.js';
import { outcomeUnknown } from './engine.js';
import type { WriteIds } from './ids.js';

/** Attempts of one chunk that each found the token spent and objects still missing. */
const MAX_ATTEMPTS = 3;

/** Per-object answers that can mean "an object with this key exists already". */
const MAY_EXIST = new Set([409, 412, 428]);

export interface CreateObjectsInput {
  /** `users/123` or `groups/456`. */
  library: string;
  kind: 'items' | 'collections' | 'searches';
  /** The new objects, without keys. */
  objects: ReadonlyArray<Record<string, unknown>>;
  /**
   * One label per object, stable across attempts of the same logical request (an input index,
   * an import entry): the object's key is derived from it.
   */
  labels: readonly string[];
  ids: WriteIds;
  call?: CallContext | undefined;
  /** After each chunk: objects settled so far of the total. */
  progress?: ((done: number, total: number) => void) | undefined;
}

/**
 * Creates the objects, 50 a request, the chunks at once within the client's in-flight bound (a
 * chunk naming a parent that another chunk creates waits for it). Answers per input index like
 * `writeBatch`: `successful` (with the object when the server or the read-back gave it),
 * `failed`. A failure when nothing landed is thrown: it is the call's failure.
 */
export async function createObjects(
  client: ZoteroClient,
  input: CreateObjectsInput,
): Promise<WriteBatchResult<ZoteroObject>> {
  if (input.labels.length !== input.objects.length || new Set(input.labels).size !== input.labels.length) {
    throw new ZoteusError(
      'internal_error',
      'Internal error in Zoteus (create labels are not one per object).',
    );
  }
  const call = input.call ?? client.newCall();
  const keys = input.labels.map((label) => input.ids.objectKey(`${input.kind}/${label}`));
  const result: WriteBatchResult<ZoteroObject> = {
    successful: [],
    unchanged: [],
    failed: [],
    libraryVersion: undefined,
  };
  const noteVersion = (v: number | undefined): void => {
    if (v !== undefined) result.libraryVersion = Math.max(result.libraryVersion ?? 0, v);
  };
  const parts = chunk(input.objects.map((_, i) => i));
  // The chunks go at once (the client's in-flight bound limits them), except that one naming a
  // parent another chunk creates waits for that chunk; after a failure no chunk is sent.
  const needs = chunkDependencies(
    input.kind,
    input.objects.map((o, i) => ({ ...o, key: keys[i] })),
    parts,
  );
  let landed = 0;
  const {
    done: finished,
    errors,
    stopped,
  } = await runChunkWaves(needs, async (c, beforeSend) => {
    const indexes = parts[c] as number[];
    await createChunk(client, input, keys, indexes, call, result, noteVersion, beforeSend);
    landed += indexes.length;
    input.progress?.(landed, input.objects.length);
  });
  if (stopped) {
    // Nothing of the request landed: the caller gets the error itself.
    if (result.successful.length === 0) throw stopped.error;
    // What a failed chunk did not settle failed with its error; a chunk not sent, with the first.
    const settled = new Set([...result.successful, ...result.failed].map((e) => e.index));
    parts.forEach((indexes, c) => {
      if (finished[c]) return;
      for (const i of indexes) {
        if (!settled.has(i)) result.failed.push(failedByError(i, keys[i], errors[c] ?? stopped?.error));
      }
    });
  }
  const byIndex = (a: { index: number }, b: { index: number }): number => a.index - b.index;
  result.successful.sort(byIndex);
  result.failed.sort(byIndex);
  return result;
}

async function createChunk(
  client: ZoteroClient,
  input: CreateObjectsInput,
  keys: readonly string[],
  indexes: readonly number[],
  call: CallContext,
  result: WriteBatchResult<ZoteroObject>,
  noteVersion: (v: number | undefined) => void,
  beforeSend: () => void,
): Promise<void> {
  const { library, kind, ids } = input;
  let pending = [...indexes];
  const landed = (index: number, object?: ZoteroObject): void => {
    result.successful.push({ index, key: keys[index] as string, ...(object ? { object } : {}) });
  };
  /** Reads the pending keys back: those found landed (in an earlier attempt); the rest stay pending. */
  const readBack = async (which: readonly number[]): Promise<number[]> => {
    const read = await client.getByKeys(
      library,
      kind,
      which.map((i) => keys[i] as string),
      { call },
    );
    noteVersion(read.libraryVersion);
    const missing: number[] = [];
    for (const i of which) {
      const object = read.byKey.get(keys[i] as string);
      if (object) landed(i, object);
      else missing.push(i);
    }
    return missing;
  };

  if (ids.resumed) pending = await readBack(pending);
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= MAX_ATTEMPTS) {
      for (const i of pending) {
        const message = `Zotero refused the write token ${MAX_ATTEMPTS} times and the object is not in the library.`;
        result.failed.push(failedEntry(i, keys[i], 412, message, 'conflict'));
      }
      return;
    }
    // The token names what is sent: the same objects in the same attempt send the same token.
    const token = ids.writeToken(`${kind}/${pending.map((i) => keys[i]).join(',')}/${attempt}`);
    let written: WriteBatchResult<ZoteroObject>;
    try {
      written = await client.writeBatch(
        library,
        kind,
        pending.map((i) => ({ ...(input.objects[i] as Record<string, unknown>), key: keys[i] })),
        { call, writeToken: token, beforeSend },
      );
    } catch (error) {
      if (error instanceof NotStarted) throw error;
      const err = toZoteusError(error);
      if (err.status === 412) {
        // The token was used by an earlier attempt: what it created is there, the rest is sent again.
        pending = await readBack(pending);
        continue;
      }
      if (!outcomeUnknown(err)) throw error;
      // The answer was lost (or the server gave up): the request may have landed. Only a read tells.
      let missing: number[];
      try {
        missing = await readBack(pending);
      } catch {
        throw error;
      }
      if (missing.length === pending.length) throw error;
      for (const i of missing) result.failed.push(failedByError(i, keys[i], err));
      return;
    }
    noteVersion(written.libraryVersion);
    const maybeThere: number[] = [];
    const sent = pending;
    pending = [];
    for (const s of written.successful) landed(sent[s.index] as number, s.object);
    // Unchanged: an object with our key and this content is there, so an earlier attempt made it.
    for (const u of written.unchanged) landed(sent[u.index] as number);
    for (const f of written.failed) {
      const index = sent[f.index] as number;
      if (MAY_EXIST.has(f.code)) maybeThere.push(index);
      else result.failed.push(failedAt(f, index, keys));
    }
    if (maybeThere.length > 0) {
      const missing = await readBack(maybeThere);
      const reasons = new Map(written.failed.map((f) => [sent[f.index] as number, f]));
      for (const i of missing) result.failed.push(failedAt(reasons.get(i) as FailedEntry, i, keys));
    }
  }
}

function failedAt(f: FailedEntry, index: number, keys: readonly string[]): FailedEntry {
  return failedEntry(index, keys[index], f.code, f.message, f.reason || reasonForCode(f.code));
}
