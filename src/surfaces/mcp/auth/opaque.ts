/**
 * The opaque values the authorization server hands out (access and refresh tokens, codes, DCR
 * client ids): 32 random bytes, base64url. The store keeps only their SHA-256, so a copy of the
 * database grants nothing.
 */
import { createHash, randomBytes } from 'node:crypto';

export function newOpaqueValue(): string {
  return randomBytes(32).toString('base64url');
}

export function hashOpaque(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}
