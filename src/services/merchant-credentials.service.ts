import type { Actor } from '../domain/audit.ts';
import { notFound } from '../domain/errors.ts';
import { formatInstant } from '../domain/time.ts';
import type { Db } from '../store/db.ts';
import { listClients } from '../store/credentials.repository.ts';
import * as repo from '../store/merchants.repository.ts';
import { listOpenInvitations, listTeam } from '../store/merchant-users.repository.ts';
import type { MerchantScope } from '../store/tenancy.ts';
import { revokeToken } from './merchants.service.ts';

/** The console lists a merchant's newest tokens, this many. */
const TOKENS_SHOWN = 100;

/**
 * A merchant with its OAuth client id and bearer tokens, as the console shows them: never a
 * secret (only hashes are stored; a secret is shown once, by the request that created it).
 */
export async function merchantCredentials(scope: MerchantScope, now: number) {
  const { handle: db, merchantId } = scope;
  const merchant = await repo.findMerchant(db, merchantId);
  if (!merchant) throw notFound('merchant');
  const tokens = await repo.tokensOfMerchant(db, merchantId, TOKENS_SHOWN);
  const clients = await listClients(scope);
  return {
    merchant: {
      id: String(merchant.id),
      name: merchant.name,
      status: merchant.status,
      clientId: merchant.client_id,
      requireTwoFactor: merchant.require_two_factor === 1,
      createdAt: formatInstant(merchant.created_at),
    },
    // The clients the business manager created (SPEC §14), revoked ones too: the operator sees each one's state.
    clients: clients.map((c) => ({
      id: String(c.id),
      clientId: c.client_id,
      name: c.name,
      createdAt: formatInstant(c.created_at),
      rotatedAt: formatInstant(c.rotated_at),
      lastUsedAt: formatInstant(c.last_used_at),
      revokedAt: formatInstant(c.revoked_at),
      state: c.revoked_at !== null ? 'revoked' : 'active',
    })),
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
export async function revokeMerchantToken(merchant: MerchantScope<Db>, actor: Actor, tokenId: number, now: number) {
  const db = merchant.handle;
  const token = await repo.findToken(db, tokenId);
  if (!token || token.merchant_id !== merchant.merchantId) throw notFound('token');
  return revokeToken(db, actor, tokenId, now);
}

/**
 * The merchant's business manager users and open invitations, as the console's merchant page lists
 * them (never a password hash, an authenticator key or a link: only their facts).
 */
export async function merchantTeam(scope: MerchantScope, now: number) {
  const [members, invitations] = await Promise.all([listTeam(scope), listOpenInvitations(scope, now)]);
  return {
    members: members.map((u) => ({
      id: String(u.id),
      email: u.email,
      role: u.role,
      twoFactor: u.totp_secret !== null ? 'on' : u.totp_pending_secret !== null ? 'being set up' : 'off',
      canResetTwoFactor: u.totp_secret !== null || u.totp_pending_secret !== null,
      lastSignInAt: formatInstant(u.last_sign_in_at),
      createdAt: formatInstant(u.created_at),
    })),
    invitations: invitations.map((i) => ({
      id: String(i.id),
      email: i.email,
      role: i.role,
      createdAt: formatInstant(i.created_at),
      expiresAt: formatInstant(i.expires_at),
    })),
  };
}
