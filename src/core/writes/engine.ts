/**
 * Versioned write engine for set-like changes (collection membership, tags): read the current
 * objects 50 at a time, skip those already in the wanted state, write the rest 50 at a time
 * with each object's version, and answer a per-object 412 (someone wrote first) by re-reading
 * and re-applying, a bounded number of rounds. n objects cost about 2·⌈n/50⌉ requests.
 */
import { outcomeUnknown, toZoteusError } from '../errors.js';
import type {
  CallContext,
  FailedEntry,
  GetByKeysResult,
  WriteBatchResult,
  ZoteroClient,
} from '../zotero/index.js';
import { failedEntry, reasonForCode } from '../zotero/index.js';

export const DEFAULT_MAX_ROUNDS = 3;

/**
 * Thrown by an `apply` that will not change this object (someone changed what the change
 * depends on): the object fails as a `conflict` with this message and nothing is sent for it.
 */
export class RefusedChange extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedChange';
  }
}

export type ObjectData = Record<string, unknown>;

export interface SetChangeInput<D extends ObjectData = ObjectData> {
  /** `users/123` or `groups/456`. */
  library: string;
  kind: 'items' | 'collections';
  keys: readonly string[];
  /**
   * Pure: the object's data with the change applied, or null when it is already in the wanted
   * state. It gets a copy, and is applied again to fresh data after a conflict. It throws
   * `RefusedChange` to leave the object untouched as a conflict.
   */
  apply: (data: D) => D | null;
  /** Read-apply-write rounds in all, the first included (default 3). */
  maxRounds?: number | undefined;
  /** Shares one retry budget with the caller's other requests. */
  call?: CallContext | undefined;
  /** After each round: objects settled so far (succeeded, unchanged or failed) of the total. */
  progress?: ((done: number, total: number) => void) | undefined;
}

export interface SetChangeResult {
  /** Keys written, in input order. */
  succeeded: string[];
  /** Keys already in the wanted state (nothing sent for them), in input order. */
  unchanged: string[];
  failed: FailedEntry[];
  libraryVersion: number | undefined;
}

/** Deep equality of JSON values (the API's data), for deciding which fields changed. */
function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The fields of `next` that differ from `current`; `key`/`version` are the engine's own. */
export function changedFields(current: ObjectData, next: ObjectData): ObjectData {
  const out: ObjectData = {};
  for (const [field, value] of Object.entries(next)) {
    if (field === 'key' || field === 'version') continue;
    if (!same(current[field], value)) out[field] = value;
  }
  return out;
}

export async function applySetChange<D extends ObjectData = ObjectData>(
  client: ZoteroClient,
  input: SetChangeInput<D>,
): Promise<SetChangeResult> {
  const call = input.call ?? client.newCall();
  const maxRounds = Math.max(1, input.maxRounds ?? DEFAULT_MAX_ROUNDS);
  const indexOf = new Map<string, number>();
  input.keys.forEach((key, i) => {
    if (!indexOf.has(key)) indexOf.set(key, i);
  });
  const total = indexOf.size;
  const succeeded = new Set<string>();
  const unchanged = new Set<string>();
  const failed: FailedEntry[] = [];
  const conflictMessage = new Map<string, string>();
  /** Objects whose write got no answer, with the version it was sent against. */
  const inDoubt = new Map<string, number>();
  let libraryVersion: number | undefined;
  const noteVersion = (v: number | undefined): void => {
    if (v !== undefined) libraryVersion = Math.max(libraryVersion ?? 0, v);
  };
  const fail = (key: string, code: number, message: string, reason = reasonForCode(code)): void => {
    failed.push(failedEntry(indexOf.get(key) as number, key, code, message, reason));
  };
  /** A thrown error ends the change: its objects fail, unless nothing at all happened yet. */
  const failEach = (keys: string[], error: unknown): void => {
    if (succeeded.size === 0 && unchanged.size === 0 && failed.length === 0) throw error;
    const err = toZoteusError(error);
    for (const key of keys) fail(key, err.status ?? 0, err.message, err.code);
  };

  let pending = [...indexOf.keys()];
  for (let round = 1; round <= maxRounds && pending.length > 0; round++) {
    let read: GetByKeysResult;
    try {
      read = await client.getByKeys(input.library, input.kind, pending, { call });
    } catch (error) {
      failEach(pending, error);
      pending = [];
      break;
    }
    noteVersion(read.libraryVersion);
    for (const key of read.missing)
      fail(key, 404, `${singular(input.kind)} ${key} does not exist in library ${input.library}.`);

    const writes: ObjectData[] = [];
    for (const object of read.objects) {
      const data = (object.data ?? {}) as D;
      let next: D | null;
      try {
        next = input.apply(structuredClone(data));
      } catch (error) {
        if (!(error instanceof RefusedChange)) throw error;
        fail(object.key, 409, error.message, 'conflict');
        continue;
      }
      const changes = next === null ? {} : changedFields(data, next);
      if (Object.keys(changes).length === 0) {
        // A write whose answer was lost landed if the object moved on and is now as wanted.
        const sentAt = inDoubt.get(object.key);
        if (sentAt !== undefined && (object.version ?? 0) > sentAt) succeeded.add(object.key);
        else unchanged.add(object.key);
        continue;
      }
      // Only the changed fields travel: batch POST of existing objects has PATCH semantics.
      writes.push({ key: object.key, version: object.version ?? data.version, ...changes });
    }
    pending = [];
    if (writes.length === 0) break;

    let written: WriteBatchResult;
    try {
      written = await client.writeBatch(input.library, input.kind, writes, { call });
    } catch (error) {
      const err = toZoteusError(error);
      if (round < maxRounds && outcomeUnknown(err)) {
        // The answer was lost: the write may have landed. Versioned writes are safe to repeat,
        // so read them again next round; what landed shows as moved on and in the wanted state.
        for (const w of writes) inDoubt.set(w.key as string, w.version as number);
        pending = writes.map((w) => w.key as string);
        continue;
      }
      failEach(
        writes.map((w) => w.key as string),
        error,
      );
      break;
    }
    noteVersion(written.libraryVersion);
    for (const s of written.successful) succeeded.add(writes[s.index]?.key as string);
    for (const u of written.unchanged) unchanged.add(writes[u.index]?.key as string);
    for (const f of written.failed) {
      const key = writes[f.index]?.key as string;
      if (f.code === 412) {
        // Someone wrote first: read it again and re-apply to their version, never resend ours.
        pending.push(key);
        conflictMessage.set(key, f.message);
      } else if (
        round < maxRounds &&
        (f.reason === 'network_error' || f.reason === 'rate_limited' || f.code >= 500)
      ) {
        // A later chunk whose answer was lost: read again next round, as above.
        inDoubt.set(key, writes[f.index]?.version as number);
        pending.push(key);
      } else if (f.reason === reasonForCode(f.code)) {
        fail(key, f.code, f.message);
      } else {
        // A whole-chunk failure inside the batch (network, rate limit): keep its code.
        fail(key, f.code, f.message, f.reason);
      }
    }
    input.progress?.(succeeded.size + unchanged.size + failed.length, total);
  }
  for (const key of pending) {
    const last = conflictMessage.get(key);
    fail(
      key,
      412,
      `${singular(input.kind)} ${key} kept changing during the write (${maxRounds} rounds of read and re-apply)${last ? `: ${last}` : ''}.`,
      'conflict',
    );
  }

  const inputOrder = (a: string, b: string): number =>
    (indexOf.get(a) as number) - (indexOf.get(b) as number);
  return {
    succeeded: [...succeeded].sort(inputOrder),
    unchanged: [...unchanged].filter((k) => !succeeded.has(k)).sort(inputOrder),
    failed: failed.sort((a, b) => a.index - b.index),
    libraryVersion,
  };
}

export { outcomeUnknown };

function singular(kind: 'items' | 'collections'): string {
  return kind === 'items' ? 'Item' : 'Collection';
}
