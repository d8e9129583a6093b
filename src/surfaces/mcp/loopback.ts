/**
 * Which hosts only this machine can reach: one answer for where the server may listen without
 * sign-in, which Host headers a loopback server accepts, and which redirect URIs and issuers may
 * use plain http (the authorization server's rules).
 */
import { isIP } from 'node:net';

/** 127.0.0.0/8, ::1 (also as ::ffff:127.x) and localhost, bracketed or not, any case. */
export function isLoopbackHost(host: string): boolean {
  const bare = (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.split('.')[0] === '127';
  if (isIP(bare) === 6)
    return bare === '::1' || /^::ffff:127\./.test(bare) || /^::ffff:7f[0-9a-f]{2}:/.test(bare);
  return false;
}
