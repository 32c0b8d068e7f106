import { BlockList, isIP } from 'node:net';
import type { StockistEnv } from './vocabulary.ts';

/** One resolved address of a host name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** DNS, injectable: tests map names to the addresses they need (rebinding, private ranges). The lookup itself is in services/webhook-target.service.ts. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export type AddressKind = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

function list(entries: [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const b = new BlockList();
  for (const [net, prefix, type] of entries) b.addSubnet(net, prefix, type);
  return b;
}

// BlockList also matches IPv4-mapped IPv6 (::ffff:127.0.0.1) against the IPv4 subnets.
const LOOPBACK = list([
  ['127.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
]);
// Link-local includes the cloud metadata services (169.254.169.254, fd00:ec2::254 is in fc00::/7).
const LINK_LOCAL = list([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
]);
const PRIVATE = list([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['fc00::', 7, 'ipv6'], // unique local
]);
const RESERVED = list([
  ['0.0.0.0', 8, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved and broadcast
  ['::', 128, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'], // NAT64: could reach any IPv4 address, private ones included
  ['64:ff9b:1::', 48, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['2002::', 16, 'ipv6'], // 6to4 embeds an IPv4 address
  ['ff00::', 8, 'ipv6'],
]);

/** Where an IP address points. Anything but `public` is refused in production. */
export function addressKind(address: string): AddressKind {
  const family = isIP(address);
  if (family === 0) return 'reserved';
  const type = family === 6 ? 'ipv6' : 'ipv4';
  if (LOOPBACK.check(address, type)) return 'loopback';
  if (LINK_LOCAL.check(address, type)) return 'link-local';
  if (PRIVATE.check(address, type)) return 'private';
  if (RESERVED.check(address, type)) return 'reserved';
  return 'public';
}

/** Host names that are metadata services whatever they resolve to. */
const METADATA_HOSTS = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

/** Refusal of a webhook URL, with the reason a merchant can act on. */
export class UnsafeWebhookUrl extends Error {}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** The URL's shape, before any DNS: scheme, no credentials, a host. Returns the parsed URL. */
export function parseWebhookUrl(raw: string, env: StockistEnv): URL {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw new UnsafeWebhookUrl(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeWebhookUrl('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UnsafeWebhookUrl('must be an https URL');
  if (env === 'production' && url.protocol !== 'https:') throw new UnsafeWebhookUrl('must be an https URL in production');
  if (url.username || url.password) throw new UnsafeWebhookUrl('must not carry credentials');
  if (url.hash) throw new UnsafeWebhookUrl('must not have a fragment');
  const host = hostOf(url);
  if (!host) throw new UnsafeWebhookUrl('must name a host');
  if (METADATA_HOSTS.has(host.toLowerCase().replace(/\.$/, ''))) throw new UnsafeWebhookUrl('must not point at a metadata service');
  return url;
}

/** `[::1]` → `::1`. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Checks every address the URL's host resolved to: production allows only public addresses;
 * sandbox also allows loopback (a receiver on the developer's machine). Returns the address to
 * connect to, so the request goes exactly where the check looked (no DNS rebinding between the
 * check and the connection).
 */
export function checkResolvedAddresses(host: string, addresses: ResolvedAddress[], env: StockistEnv): ResolvedAddress {
  if (addresses.length === 0) throw new UnsafeWebhookUrl(`host ${host} does not resolve`);
  for (const a of addresses) {
    const kind = addressKind(a.address);
    const allowed = kind === 'public' || (kind === 'loopback' && env === 'sandbox');
    if (!allowed)
      throw new UnsafeWebhookUrl(
        `resolves to a ${kind} address (${a.address}); webhooks go to public addresses only${env === 'sandbox' ? ' (and loopback in sandbox)' : ''}`,
      );
  }
  return addresses[0];
}
