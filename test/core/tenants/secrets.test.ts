/**
 * Tenants' Zotero keys at rest (AES-256-GCM under ZOTEUS_SECRET_KEYS): round trips, rotation,
 * tampering, a ciphertext moved to another tenant, the setting's refusals, and no key or
 * plaintext in any error.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ZoteusError } from '../../../src/core/errors.js';
import {
  decryptSecret,
  encryptSecret,
  needsReencryption,
  parseSecretKeys,
  reencryptSecret,
  secretKeysFromEnv,
} from '../../../src/core/tenants/secrets.js';
import { errorTexts } from '../zotero/helpers.js';

const OLD = randomBytes(32);
const NEW = randomBytes(32);
const oldB64 = OLD.toString('base64');
const newHex = NEW.toString('hex');
const idOf = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 8);
const ZOTERO_KEY = 'P9cT4mWq7ZxR2bLk8NvD3sHy';

const errors: ZoteusError[] = [];
function thrown(run: () => unknown): ZoteusError {
  try {
    run();
  } catch (error) {
    if (!(error instanceof ZoteusError)) throw error;
    errors.push(error);
    return error;
  }
  throw new Error('expected a throw');
}

afterAll(() => {
  expect(errors.length).toBeGreaterThan(8);
  for (const error of errors) {
    const text = errorTexts(error);
    for (const secret of [ZOTERO_KEY, oldB64, newHex, OLD.toString('base64url'), NEW.toString('base64')]) {
      expect(text).not.toContain(secret);
      // Not even a piece of one.
      expect(text).not.toContain(secret.slice(0, 12));
    }
  }
});

/** `blob` with one bit flipped in the base64url part `part` (2 iv, 3 tag, 4 ciphertext). */
function flipped(blob: string, part: number): string {
  const parts = blob.split('.');
  const bytes = Buffer.from(parts[part]!, 'base64url');
  bytes[0] = bytes[0]! ^ 0x01;
  parts[part] = bytes.toString('base64url');
  return parts.join('.');
}

describe('encryption and decryption', () => {
  it('round-trips under the newest key, in the self-describing format, with a fresh IV each time', () => {
    const keys = parseSecretKeys(`${newHex},${oldB64}`);
    expect(keys.map((k) => k.id)).toEqual([idOf(NEW), idOf(OLD)]);
    const a = encryptSecret(keys, ZOTERO_KEY, 'tenant-1');
    const b = encryptSecret(keys, ZOTERO_KEY, 'tenant-1');
    expect(a).not.toBe(b);
    expect(a).toMatch(
      new RegExp(`^v1\\.${idOf(NEW)}\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{32}$`),
    );
    expect(a).not.toContain(ZOTERO_KEY);
    expect(decryptSecret(keys, a, 'tenant-1')).toBe(ZOTERO_KEY);
    expect(decryptSecret(keys, encryptSecret(keys, 'é ü ✓'), undefined)).toBe('é ü ✓');
    expect(decryptSecret(keys, encryptSecret(keys, ''))).toBe('');
  });

  it('rotates: an old ciphertext decrypts, re-encryption moves it to the newest, which survives dropping the old key', () => {
    const before = parseSecretKeys(oldB64);
    const stored = encryptSecret(before, ZOTERO_KEY, 'tenant-1');
    expect(needsReencryption(before, stored)).toBe(false);

    const rotated = parseSecretKeys(`${newHex}, ${oldB64}`);
    expect(needsReencryption(rotated, stored)).toBe(true);
    expect(decryptSecret(rotated, stored, 'tenant-1')).toBe(ZOTERO_KEY);
    const moved = reencryptSecret(rotated, stored, 'tenant-1');
    expect(moved.split('.')[1]).toBe(idOf(NEW));
    expect(needsReencryption(rotated, moved)).toBe(false);
    expect(reencryptSecret(rotated, moved, 'tenant-1')).toBe(moved);

    const after = parseSecretKeys(newHex);
    expect(decryptSecret(after, moved, 'tenant-1')).toBe(ZOTERO_KEY);
    const lost = thrown(() => decryptSecret(after, stored, 'tenant-1'));
    expect(lost.code).toBe('validation_error');
    expect(lost.field).toBe('ZOTEUS_SECRET_KEYS');
    expect(lost.message).toBe(
      `A stored secret is encrypted with key id ${idOf(OLD)}, which is not among the 1 key(s) of ZOTEUS_SECRET_KEYS (${idOf(NEW)}).`,
    );
  });

  it('a flipped bit anywhere fails the integrity check, naming the key id', () => {
    const keys = parseSecretKeys(newHex);
    const blob = encryptSecret(keys, ZOTERO_KEY, 'tenant-1');
    for (const part of [2, 3, 4]) {
      const error = thrown(() => decryptSecret(keys, flipped(blob, part), 'tenant-1'));
      expect(error.code).toBe('internal_error');
      expect(error.message).toBe(
        `A stored secret cannot be decrypted: its integrity check under key id ${idOf(NEW)} failed (it was altered, or it belongs to another tenant).`,
      );
      expect(error.hint).toBe('Sign in again to store the Zotero key anew.');
    }
  });

  it("another tenant's associated data fails, as does none for a bound ciphertext", () => {
    const keys = parseSecretKeys(newHex);
    const blob = encryptSecret(keys, ZOTERO_KEY, 'tenant-1');
    expect(thrown(() => decryptSecret(keys, blob, 'tenant-2')).message).toContain('integrity check');
    expect(thrown(() => decryptSecret(keys, blob)).message).toContain('integrity check');
  });

  it('a text that is not a ciphertext is refused as such', () => {
    const keys = parseSecretKeys(newHex);
    expect(thrown(() => decryptSecret(keys, ZOTERO_KEY)).message).toBe(
      'A stored secret cannot be decrypted: it is not a Zoteus ciphertext of version v1.',
    );
    const blob = encryptSecret(keys, ZOTERO_KEY);
    expect(thrown(() => decryptSecret(keys, blob.split('.').slice(0, 4).join('.'))).message).toBe(
      'A stored secret cannot be decrypted: it is malformed.',
    );
    expect(thrown(() => needsReencryption(keys, `${blob}.x`)).message).toBe(
      'A stored secret cannot be decrypted: it is malformed.',
    );
  });
});

describe('ZOTEUS_SECRET_KEYS', () => {
  it('takes base64 (either alphabet) and hex, newest first; unset or blank is no keys', () => {
    expect(parseSecretKeys(OLD.toString('base64url')).map((k) => k.id)).toEqual([idOf(OLD)]);
    expect(parseSecretKeys(newHex.toUpperCase())[0].key.equals(NEW)).toBe(true);
    expect(secretKeysFromEnv({})).toBeUndefined();
    expect(secretKeysFromEnv({ ZOTEUS_SECRET_KEYS: '  ' })).toBeUndefined();
    expect(secretKeysFromEnv({ ZOTEUS_SECRET_KEYS: oldB64 })?.[0].key.equals(OLD)).toBe(true);
  });

  it('a bad entry is a validation_error naming the variable and its position, never the key', () => {
    const short = thrown(() => parseSecretKeys(`${newHex},${oldB64.slice(0, 40)}`));
    expect(short.code).toBe('validation_error');
    expect(short.field).toBe('ZOTEUS_SECRET_KEYS');
    expect(short.message).toBe(
      'ZOTEUS_SECRET_KEYS: entry 2 of 2 is not a 32-byte key (expected 44 characters of base64 or 64 hex digits; it has 40 characters).',
    );
    expect(short.hint).toBe('Generate a key with `openssl rand -base64 32` (or `openssl rand -hex 32`).');

    const sixteen = randomBytes(16).toString('base64');
    expect(thrown(() => parseSecretKeys(sixteen)).message).toContain('entry 1 of 1 is not a 32-byte key');
    expect(thrown(() => parseSecretKeys(`${newHex}x`)).message).toContain('it has 65 characters');
    expect(thrown(() => parseSecretKeys(`${newHex},,${oldB64}`)).message).toBe(
      'ZOTEUS_SECRET_KEYS: entry 2 of 3 is empty.',
    );
    expect(thrown(() => parseSecretKeys('')).message).toBe(
      'ZOTEUS_SECRET_KEYS is empty: it needs at least one 32-byte key.',
    );
    expect(thrown(() => parseSecretKeys(`${oldB64},${newHex},${OLD.toString('hex')}`)).message).toBe(
      `ZOTEUS_SECRET_KEYS: entry 3 of 3 repeats entry 1 (key id ${idOf(OLD)}).`,
    );
  });
});
