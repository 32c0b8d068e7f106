import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { StockistEnv } from './vocabulary.ts';

/** One resolved address of a host name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** DNS, injectable: tests map names to the addresses they need (rebinding, private ranges). The lookup itself is in services/webhook-target.service.ts. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export type AddressKind = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

// IPv4 ranges by ipaddr.js's classification (the one @fastify/proxy-addr uses); `unicast` is public.
const V4_KIND: Record<string, AddressKind> = {
  unicast: 'public',
  loopback: 'loopback',
  linkLocal: 'link-local', // includes the cloud metadata service 169.254.169.254
  private: 'private',
  carrierGradeNat: 'private',
  // unspecified, broadcast, multicast, reserved (documentation, benchmarking, 6to4 relay, 240/4),
  // as112, amt: anything else is reserved.
};
// Global unicast (RFC 4291 §2.4): only 2000::/3 is allocated as such.
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

function v4Kind(address: ipaddr.IPv4): AddressKind {
  return V4_KIND[address.range()] ?? 'reserved';
}

/**
 * IPv6: only global unicast is public (Hardening III). Refused besides loopback, link-local and
 * private (unique local fc00::/7 and the deprecated site-local fec0::/10): every special range
 * ipaddr.js knows inside 2000::/3 — Teredo, 6to4 (whatever IPv4 address they embed), documentation,
 * benchmarking, ORCHID — and everything outside it: the IPv4-compatible form `::a.b.c.d`, NAT64,
 * discard, multicast. An IPv4-mapped address (`::ffff:a.b.c.d`) is classified by its IPv4 address
 * when that one is not public (so `::ffff:127.0.0.1` is loopback, allowed in sandbox like
 * 127.0.0.1), and reserved otherwise: it is an IPv4 socket's notation, never a public IPv6 target.
 */
function v6Kind(address: ipaddr.IPv6): AddressKind {
  if (address.isIPv4MappedAddress()) {
    const kind = v4Kind(address.toIPv4Address());
    return kind === 'public' ? 'reserved' : kind;
  }
  // A string: ipaddr.js's type declarations lag behind its ranges (deprecatedSiteLocal is not in them).
  const range: string = address.range();
  if (range === 'loopback') return 'loopback';
  if (range === 'linkLocal') return 'link-local';
  if (range === 'uniqueLocal' || range === 'deprecatedSiteLocal') return 'private';
  if (range === 'unicast' && address.match(GLOBAL_UNICAST)) return 'public';
  return 'reserved';
}

/** Where an IP address points. Anything but `public` is refused in production. */
export function addressKind(address: string): AddressKind {
  // node:net's strict notation first: ipaddr.js also parses `127.1` and `0x7f.0.0.1`.
  const family = isIP(address);
  if (family === 4) return v4Kind(ipaddr.IPv4.parse(address));
  if (family !== 6) return 'reserved';
  // In hexadecimal groups first (the URL parser's canonical form): ipaddr.js reads the
  // IPv4-compatible `::127.0.0.1` (= ::7f00:1, as DNS answers may print it) as `::ffff:127.0.0.1`.
  let canonical: string;
  try {
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return 'reserved'; // a zone index (`fe80::1%eth0`): not an address a URL can name
  }
  return v6Kind(ipaddr.IPv6.parse(canonical));
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
 * Whether webhooks may go to loopback addresses: only in sandbox, and only while the operator
 * allows it (SANDBOX_LOOPBACK_WEBHOOKS, on by default in sandbox; unset here means on).
 */
export const loopbackAllowed = (env: StockistEnv, setting: boolean | undefined) => env === 'sandbox' && setting !== false;

/**
 * Checks every address the URL's host resolved to: production allows only public addresses;
 * sandbox also allows loopback (a receiver on the developer's machine) when `loopback` is set
 * (see `loopbackAllowed`). Returns the address to connect to, so the request goes exactly where
 * the check looked (no DNS rebinding between the check and the connection).
 */
export function checkResolvedAddresses(host: string, addresses: ResolvedAddress[], env: StockistEnv, loopback: boolean): ResolvedAddress {
  if (addresses.length === 0) throw new UnsafeWebhookUrl(`host ${host} does not resolve`);
  for (const a of addresses) {
    const kind = addressKind(a.address);
    const allowed = kind === 'public' || (kind === 'loopback' && env === 'sandbox' && loopback);
    if (!allowed) {
      const besides = env !== 'sandbox' ? '' : loopback ? ' (and loopback in sandbox)' : ' (loopback addresses are turned off on this server)';
      throw new UnsafeWebhookUrl(`resolves to a ${kind} address (${a.address}); webhooks go to public addresses only${besides}`);
    }
  }
  return addresses[0];
}

/** What the delivery log keeps of one answered attempt: the status code, an error for a non-2xx one, the start of the body. */
export interface RecordedResponse {
  /** Null when the attempt failed at a non-public address (LOOPBACK_FAILURE). */
  statusCode: number | null;
  error: string | null;
  /** The first RESPONSE_BODY_KEPT bytes of the body (public addresses only; null otherwise). */
  body: string | null;
}

/** How much of each response body the delivery log keeps (issue 29, 15: "the first 2 KB"). */
const RESPONSE_BODY_KEPT = 2048;

/** The first `bytes` bytes of a text as UTF-8 (a character cut in two is dropped, not garbled). */
function firstBytes(text: string, bytes: number): string {
  const encoded = Buffer.from(text, 'utf8');
  if (encoded.length <= bytes) return text;
  return new TextDecoder('utf-8', { fatal: false }).decode(encoded.subarray(0, bytes)).replace(/\uFFFD$/, '');
}

/**
 * What the delivery log keeps of a failed attempt at a receiver that is not at a public address (a
 * loopback receiver in sandbox), whatever the failure: refused, cut off, timed out, or answered
 * with a status other than 2xx (issue 44, 16). Telling these apart — or keeping how long the
 * attempt took — would let a merchant map which of the server's local ports are open and what
 * answers on them.
 */
export const LOOPBACK_FAILURE =
  'failed: no 2xx answer from a loopback address (whether it was refused, cut off, timed out or answered otherwise is not recorded)';

/**
 * Hardening III: what the delivery log (shown to the merchant) keeps of a response. From a public
 * address, the status code, the first 2 KB of the body and, when it failed, the start of the body
 * in the error too (`snippet` characters). From any other (a loopback receiver in sandbox) only
 * whether it succeeded: a 2xx is kept as 200, anything else is LOOPBACK_FAILURE without a status;
 * never the body: the log would otherwise let a merchant read the replies of services on the
 * server's own machine, or map its ports (issue 44, 16).
 */
export function recordedResponse(status: number, body: string, kind: AddressKind, snippet: number): RecordedResponse {
  const ok = status >= 200 && status <= 299;
  if (kind === 'public')
    return { statusCode: status, error: ok ? null : `HTTP ${status}${body ? `: ${body.slice(0, snippet)}` : ''}`, body: firstBytes(body, RESPONSE_BODY_KEPT) };
  return ok ? { statusCode: 200, error: null, body: null } : { statusCode: null, error: LOOPBACK_FAILURE, body: null };
}

/** The error the log keeps of an attempt that got no answer: the network's reason from a public address, else LOOPBACK_FAILURE. */
export function recordedNetworkError(message: string, kind: AddressKind): string {
  return kind === 'public' ? `network: ${message}` : LOOPBACK_FAILURE;
}
