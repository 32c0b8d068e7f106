import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { StockistEnv } from '../domain/vocabulary.ts';
import { checkResolvedAddresses, hostOf, UnsafeWebhookUrl, type HostResolver, type ResolvedAddress } from '../domain/webhook-url.ts';

export const systemResolver: HostResolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/**
 * Resolves the URL's host (the DNS I/O) and checks every address it resolves to by the rule of
 * domain/webhook-url.ts (`loopback`: see `loopbackAllowed`); returns the address to connect to.
 */
export async function resolveWebhookTarget(url: URL, env: StockistEnv, resolve: HostResolver, loopback: boolean): Promise<ResolvedAddress> {
  const host = hostOf(url);
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new UnsafeWebhookUrl(`host ${host} does not resolve`);
    }
  }
  return checkResolvedAddresses(host, addresses, env, loopback);
}
