/**
 * Which addresses a server on a shared deployment may fetch on a caller's word (SSRF): not
 * loopback, private, carrier-grade NAT, link-local, benchmark, multicast or reserved ranges,
 * nor IPv6's unique-local, link-local and mapped forms of those.
 */
import type * as Dns from 'node:dns/promises';
import type * as Net from 'node:net';
import { builtin } from '../builtin.js';
import { ZoteusError } from '../errors.js';

// node:net and node:dns are loaded on first use: every `zot` command loads this module (through
// the HTTP layer), and node:net costs a process about 7 ms at start; most never fetch anything.
// (require's own cache keeps the module: nothing to keep here.)
const nodeNet = (): typeof Net => builtin<typeof Net>('node:net');
const isIP = (address: string): number => nodeNet().isIP(address);

let nonPublic: Net.BlockList | undefined;
/** Addresses a shared server never fetches from on a caller's word. */
function nonPublicList(): Net.BlockList {
  if (nonPublic) return nonPublic;
  const list = new (nodeNet().BlockList)();
  addSubnets(list);
  return (nonPublic = list);
}

function addSubnets(list: Net.BlockList): void {
  for (const [net, prefix] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['224.0.0.0', 3],
  ] as const) {
    list.addSubnet(net, prefix, 'ipv4');
  }
  for (const [net, prefix] of [
    ['::', 127],
    ['64:ff9b::', 96],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
  ] as const) {
    list.addSubnet(net, prefix, 'ipv6');
  }
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // An IPv4-mapped address is the IPv4 address it maps (BlockList would match it to every IPv4 rule).
  const mapped = /^::ffff:(.+)$/i.exec(address);
  if (family === 6 && mapped) return isIP(mapped[1]!) === 4 && isPublicAddress(mapped[1]!);
  return !nonPublicList().check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Refuses `url` unless every address its host resolves to is public: checked before each
 * request and each redirect hop (a name could still resolve otherwise a moment later; the
 * check closes the plain cases: a private address, a name of one, a redirect to one).
 */
export async function refuseNonPublic(url: URL): Promise<void> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const addresses =
    isIP(host) !== 0
      ? [host]
      : await builtin<typeof Dns>('node:dns/promises')
          .lookup(host, { all: true, verbatim: true })
          .then(
            (found) => found.map((a) => a.address),
            () => [] as string[],
          );
  if (addresses.length > 0 && addresses.every(isPublicAddress)) return;
  throw new ZoteusError(
    'validation_error',
    addresses.length === 0
      ? `${url.host} does not resolve to an address, so it was not fetched.`
      : `${url.host} is a loopback, private or reserved address, which this shared server never fetches on a caller's behalf.`,
    { field: 'url', hint: 'Give a public web address (or the DOI) instead.' },
  );
}
