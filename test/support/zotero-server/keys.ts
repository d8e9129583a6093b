import { randomInt } from 'node:crypto';

/** Zotero's key alphabet: no 0, 1 or O, so keys survive being read aloud or retyped. */
export const KEY_CHARS = '23456789ABCDEFGHIJKLMNPQRSTUVWXYZ';

const KEY_PATTERN = /^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$/;

export function randomKey(): string {
  let key = '';
  for (let i = 0; i < 8; i++) key += KEY_CHARS[randomInt(KEY_CHARS.length)];
  return key;
}

export function isValidKey(value: unknown): value is string {
  return typeof value === 'string' && KEY_PATTERN.test(value);
}
