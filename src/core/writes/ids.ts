/**
 * The object keys and write tokens of one logical request. A create is retry-safe only if
 * every attempt of it (the write engine's own resend after a reset, or the caller's retry with
 * the same idempotency key) sends the same keys and tokens: Zotero then recognises the repeat
 * instead of creating a second copy. So they are derived from one seed, which the idempotency
 * record holds before the first request is sent; without an idempotency key the seed lives only
 * for the call, which still makes the engine's own retries safe.
 */
import { randomHex, sha256 } from '../node-crypto.js';

/** Zotero's key alphabet: digits 2-9 and capitals without O. */
const KEY_ALPHABET = '23456789ABCDEFGHIJKLMNPQRSTUVWXYZ';

export interface WriteIds {
  /**
   * True when an earlier attempt of this logical request may already have written: creates
   * then read their keys back before sending, so nothing lands twice.
   */
  readonly resumed: boolean;
  /** The client-generated key of the object this request labels `label` (stable across attempts). */
  objectKey(label: string): string;
  /** The `Zotero-Write-Token` of the attempt labelled `label` (32 hex characters). */
  writeToken(label: string): string;
  /**
   * Where this logical request's writes go (the desktop's local API or the cloud), remembered
   * by its idempotency record: a resumed request never switches sides. Absent without a record.
   */
  readonly side?: {
    /** The side an earlier attempt chose, or this one once pinned. */
    readonly pinned: 'desktop' | 'cloud' | undefined;
    /** Resolves once the choice is remembered (before anything is sent to that side). */
    pin(side: 'desktop' | 'cloud'): Promise<void>;
  };
}

/** A Zotero key from 8 bytes: one byte a character (the slight bias of the modulo costs no safety). */
function keyFrom(bytes: Uint8Array): string {
  let key = '';
  for (let i = 0; i < 8; i++) key += KEY_ALPHABET[(bytes[i] as number) % KEY_ALPHABET.length];
  return key;
}

function digest(seed: string, purpose: string, label: string): Buffer {
  return sha256().update(seed).update('\0').update(purpose).update('\0').update(label).digest();
}

/** Keys and tokens derived from `seed`; `onDerive` sees each one as it is first handed out. */
export function writeIdsFrom(
  seed: string,
  resumed: boolean,
  onDerive?: (kind: 'key' | 'token' | 'side', label: string, value: string) => void | Promise<void>,
  side?: 'desktop' | 'cloud',
): WriteIds {
  let pinned = side;
  const seen = new Map<string, string>();
  const remember = (kind: 'key' | 'token', label: string, make: () => string): string => {
    const id = `${kind}\0${label}`;
    let value = seen.get(id);
    if (value === undefined) {
      value = make();
      seen.set(id, value);
      // Keys and tokens follow from the seed: noted for inspection, never waited for.
      void onDerive?.(kind, label, value);
    }
    return value;
  };
  return {
    resumed,
    objectKey: (label) => remember('key', label, () => keyFrom(digest(seed, 'key', label))),
    writeToken: (label) =>
      remember('token', label, () => digest(seed, 'token', label).toString('hex').slice(0, 32)),
    side: {
      get pinned() {
        return pinned;
      },
      pin: async (chosen) => {
        if (pinned !== undefined) return;
        pinned = chosen;
        await onDerive?.('side', 'side', chosen);
      },
    },
  };
}

/** A fresh seed: 128 random bits. */
export function newWriteSeed(): string {
  return randomHex(16);
}

/**
 * Ids for work without an idempotency record: every key and token is new. Safe because a
 * create derives each object's key once and keeps it for all its own attempts, and right for
 * deps that outlive one call (an MCP server's), where a remembered label would hand the
 * second call the first call's keys.
 */
export function freshWriteIds(): WriteIds {
  return {
    resumed: false,
    objectKey: () => keyFrom(Buffer.from(randomHex(8), 'hex')),
    writeToken: () => randomHex(16),
  };
}
