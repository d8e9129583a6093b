/**
 * Tenants' Zotero keys at rest: AES-256-GCM under the keys of `ZOTEUS_SECRET_KEYS`
 * (comma-separated, newest first). Encryption always uses the newest; decryption uses the key the
 * ciphertext names, so old ciphertexts keep working while the keys rotate, and
 * `needsReencryption` tells which to re-encrypt before an old key is dropped.
 *
 * A ciphertext is `v1.<keyId>.<iv>.<tag>.<ciphertext>`: keyId the first 8 hex digits of the
 * key's SHA-256, the rest base64url (a 12-byte random IV, the 16-byte tag). The associated data
 * (the tenant's id) is bound into the tag, so a ciphertext moved to another tenant fails.
 * No message ever holds a key or a plaintext, nor a piece of one.
 */
import type * as NodeCrypto from 'node:crypto';
import { builtin } from '../builtin.js';
import { ZoteusError } from '../errors.js';

export const SECRET_KEYS_VAR = 'ZOTEUS_SECRET_KEYS';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

let crypto: typeof NodeCrypto | undefined;
function nodeCrypto(): typeof NodeCrypto {
  // Loaded on first use, as core/node-crypto.ts does: only a shared deployment encrypts.
  return (crypto ??= builtin<typeof NodeCrypto>('node:crypto'));
}

export interface SecretKey {
  /** First 8 hex digits of the key's SHA-256: names the key in a ciphertext and in messages. */
  readonly id: string;
  readonly key: Buffer;
}

/** Newest first; never empty. */
export type SecretKeys = readonly [SecretKey, ...SecretKey[]];

const GENERATE_HINT = 'Generate a key with `openssl rand -base64 32` (or `openssl rand -hex 32`).';

function badSetting(message: string): ZoteusError {
  return new ZoteusError('validation_error', message, { field: SECRET_KEYS_VAR, hint: GENERATE_HINT });
}

function keyId(key: Buffer): string {
  return nodeCrypto().createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** 64 hex digits, or 32 bytes as base64 (44 characters with the padding, either alphabet). */
function decodeKey(entry: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(entry)) return Buffer.from(entry, 'hex');
  if (/^[A-Za-z0-9+/]{43}=$/.test(entry) || /^[A-Za-z0-9_-]{43}=?$/.test(entry)) {
    const bytes = Buffer.from(
      entry.replace(/=$/, ''),
      entry.includes('-') || entry.includes('_') ? 'base64url' : 'base64',
    );
    return bytes.length === KEY_BYTES ? bytes : undefined;
  }
  return undefined;
}

/**
 * The keys of a `ZOTEUS_SECRET_KEYS` value, newest first. A bad entry is a validation_error
 * naming its position and its length, never its characters.
 */
export function parseSecretKeys(value: string): SecretKeys {
  const entries = value.split(',').map((e) => e.trim());
  if (entries.length === 1 && entries[0] === '') {
    throw badSetting(`${SECRET_KEYS_VAR} is empty: it needs at least one 32-byte key.`);
  }
  const keys: SecretKey[] = [];
  entries.forEach((entry, index) => {
    const position = `entry ${index + 1} of ${entries.length}`;
    if (entry === '') throw badSetting(`${SECRET_KEYS_VAR}: ${position} is empty.`);
    const key = decodeKey(entry);
    if (key === undefined) {
      throw badSetting(
        `${SECRET_KEYS_VAR}: ${position} is not a 32-byte key (expected 44 characters of base64 or 64 hex digits; it has ${entry.length} characters).`,
      );
    }
    const id = keyId(key);
    const same = keys.findIndex((k) => k.id === id);
    if (same >= 0)
      throw badSetting(`${SECRET_KEYS_VAR}: ${position} repeats entry ${same + 1} (key id ${id}).`);
    keys.push({ id, key });
  });
  return keys as unknown as SecretKeys;
}

/** The keys of the environment, or undefined when `ZOTEUS_SECRET_KEYS` is unset or blank. */
export function secretKeysFromEnv(env: Record<string, string | undefined>): SecretKeys | undefined {
  const value = env[SECRET_KEYS_VAR];
  return value === undefined || value.trim() === '' ? undefined : parseSecretKeys(value);
}

/** What GCM authenticates besides the ciphertext: the format and the caller's context. */
function associated(aad: string | undefined): Buffer {
  return Buffer.from(`zoteus-secret:${VERSION}\u0000${aad ?? ''}`, 'utf8');
}

/** `plaintext` encrypted under the newest key, bound to `aad` (the tenant's id). */
export function encryptSecret(keys: SecretKeys, plaintext: string, aad?: string): string {
  const newest = keys[0];
  const c = nodeCrypto();
  const iv = c.randomBytes(IV_BYTES);
  const cipher = c.createCipheriv('aes-256-gcm', newest.key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(associated(aad));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [
    VERSION,
    newest.id,
    iv.toString('base64url'),
    tag.toString('base64url'),
    body.toString('base64url'),
  ].join('.');
}

interface Parsed {
  keyId: string;
  iv: Buffer;
  tag: Buffer;
  body: Buffer;
}

function unreadable(why: string): ZoteusError {
  return new ZoteusError('internal_error', `A stored secret cannot be decrypted: ${why}.`, {
    hint: 'Sign in again to store the Zotero key anew.',
  });
}

function parse(blob: string): Parsed {
  const parts = blob.split('.');
  if (parts[0] !== VERSION) {
    throw unreadable(`it is not a Zoteus ciphertext of version ${VERSION}`);
  }
  const [, id, iv, tag, body] = parts;
  const b64 = /^[A-Za-z0-9_-]*$/;
  if (
    parts.length !== 5 ||
    id === undefined ||
    !/^[0-9a-f]{8}$/.test(id) ||
    [iv, tag, body].some((p) => p === undefined || !b64.test(p))
  ) {
    throw unreadable('it is malformed');
  }
  const parsed = {
    keyId: id,
    iv: Buffer.from(iv!, 'base64url'),
    tag: Buffer.from(tag!, 'base64url'),
    body: Buffer.from(body!, 'base64url'),
  };
  if (parsed.iv.length !== IV_BYTES || parsed.tag.length !== TAG_BYTES) throw unreadable('it is malformed');
  return parsed;
}

/**
 * The plaintext of `blob`, with the key it names (any of `keys`). An unknown key id is a
 * validation_error (the key was dropped from the setting too early); a failed tag (altered, or
 * encrypted for other associated data) an internal_error naming the key id.
 */
export function decryptSecret(keys: SecretKeys, blob: string, aad?: string): string {
  const parsed = parse(blob);
  const entry = keys.find((k) => k.id === parsed.keyId);
  if (entry === undefined) {
    throw new ZoteusError(
      'validation_error',
      `A stored secret is encrypted with key id ${parsed.keyId}, which is not among the ${keys.length} key(s) of ${SECRET_KEYS_VAR} (${keys.map((k) => k.id).join(', ')}).`,
      {
        field: SECRET_KEYS_VAR,
        hint: `Put that key back in ${SECRET_KEYS_VAR}, after the newest, until every secret is re-encrypted under the newest key.`,
      },
    );
  }
  const decipher = nodeCrypto().createDecipheriv('aes-256-gcm', entry.key, parsed.iv, {
    authTagLength: TAG_BYTES,
  });
  decipher.setAAD(associated(aad));
  decipher.setAuthTag(parsed.tag);
  try {
    return Buffer.concat([decipher.update(parsed.body), decipher.final()]).toString('utf8');
  } catch {
    throw unreadable(
      `its integrity check under key id ${parsed.keyId} failed (it was altered, or it belongs to another tenant)`,
    );
  }
}

/** Whether `blob` is not under the newest key, and so must be re-encrypted before its key is dropped. */
export function needsReencryption(keys: SecretKeys, blob: string): boolean {
  return parse(blob).keyId !== keys[0].id;
}

/** `blob` under the newest key (the same text when it already is). */
export function reencryptSecret(keys: SecretKeys, blob: string, aad?: string): string {
  return needsReencryption(keys, blob) ? encryptSecret(keys, decryptSecret(keys, blob, aad), aad) : blob;
}
