import type { Actor } from '../domain/audit.ts';
import { notFound } from '../domain/errors.ts';
import { formatInstant } from '../domain/time.ts';
import type { Db, Handle } from '../store/db.ts';
import * as repo from '../store/merchants.repository.ts';
import { revokeToken } from './merchants.service.ts';

/** The console lists a merchant's newest tokens, this many. */
const TOKENS_SHOWN = 100;

/**
 * A merchant with its OAuth client id and bearer tokens, as the console shows them: never a
 * secret (only hashes are stored; a secret is shown once, by the request that created it).
 */
export async function merchantCredentials(db: Handle, merchantId: number, now: number) {
  const merchant = await repo.findMerchant(db, merchantId);
  if (!merchant) throw notFound('merchant');
  const tokens = await repo.tokensOfMerchant(db, merchantId, TOKENS_SHOWN);
  return {
    merchant: {
      id: String(merchant.id),
      name: merchant.name,
      status: merchant.status,
      clientId: merchant.client_id,
      createdAt: formatInstant(merchant.created_at),
    },
    tokens: tokens.map((t) => ({
      id: String(t.id),
      kind: t.kind,
      environment: t.environment,
      scopes: t.scopes.split(' '),
      createdAt: formatInstant(t.created_at),
      expiresAt: formatInstant(t.expires_at),
      revokedAt: formatInstant(t.revoked_at),
      state: t.revoked_at !== null ? 'revoked' : t.expires_at !== null && t.expires_at <= now ? 'expired' : 'active',
    })),
  };
}

/** Revokes one of this merchant's tokens; a token of another merchant is not found here. */
export async function revokeMerchantToken(db: Db, actor: Actor, merchantId: number, tokenId: number, now: number) {
  const token = await repo.findToken(db, tokenId);
  if (!token || token.merchant_id !== merchantId) throw notFound('token');
  return revokeToken(db, actor, tokenId, now);
}
