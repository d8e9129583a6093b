/**
 * PKCE (RFC 7636), S256 only (OAuth 2.1 and the MCP authorization specification): the code
 * challenge is BASE64URL(SHA-256(code_verifier)); `plain` is refused.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** A verifier: 43 to 128 unreserved characters (RFC 7636 §4.1). */
export const VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge: the 43 base64url characters of a SHA-256. */
export const S256_CHALLENGE_PATTERN = /^[A-Za-z0-9\-_]{43}$/;

export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** True when the verifier is well formed and hashes to the challenge (compared in constant time). */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER_PATTERN.test(verifier)) return false;
  const computed = Buffer.from(s256Challenge(verifier));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
