/**
 * node:crypto, loaded on first use. Importing it costs a `zot` process about 6 ms at start,
 * and most commands (every read) never hash anything nor draw random bytes.
 */
import type * as NodeCrypto from 'node:crypto';
import { builtin } from './builtin.js';

let loaded: typeof NodeCrypto | undefined;

function nodeCrypto(): typeof NodeCrypto {
  return (loaded ??= builtin<typeof NodeCrypto>('node:crypto'));
}

/** A SHA-256 hash to feed with `update()`. */
export function sha256(): NodeCrypto.Hash {
  return nodeCrypto().createHash('sha256');
}

/** `bytes` random bytes from the system's generator, as hex. */
export function randomHex(bytes: number): string {
  return nodeCrypto().randomBytes(bytes).toString('hex');
}
