import type { Selectable } from 'kysely';
import type { Handle, Trx } from './db.ts';
import type { OAuthRefreshTokensTable } from './schema.ts';
import { handleOf } from './scope-handle.ts';
import type { MerchantScope } from './tenancy.ts';

export type RefreshToken = Selectable<OAuthRefreshTokensTable>;

export async function insertRefreshToken(
  db: Trx,
  r: {
    merchantId: number;
    familyId: string;
    tokenHash: string;
    environment: RefreshToken['environment'];
    scopes: string[];
    expiresAt: number;
    oauthClientId?: number | null;
  },
  now: number,
): Promise<RefreshToken> {
  return db
    .insertInto('oauth_refresh_tokens')
    .values({
      merchant_id: r.merchantId,
      family_id: r.familyId,
      token_hash: r.tokenHash,
      environment: r.environment,
      scopes: r.scopes.join(' '),
      expires_at: r.expiresAt,
      used_at: null,
      revoked_at: null,
      created_at: now,
      oauth_client_id: r.oauthClientId ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export const findRefreshTokenByHash = (db: Handle, tokenHash: string) =>
  db.selectFrom('oauth_refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();

/**
 * Consumes a refresh token if nobody has: the conditional update is the claim, so of two
 * concurrent refreshes with one token exactly one wins and the other is treated as a reuse.
 */
export async function claimRefreshToken(db: Trx, id: number, now: number): Promise<boolean> {
  const r = await db
    .updateTable('oauth_refresh_tokens')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Revokes every refresh token and access token of a family (reuse detected, or operator revocation). */
export async function revokeFamily(db: Trx, familyId: string, now: number): Promise<void> {
  await db.updateTable('oauth_refresh_tokens').set({ revoked_at: now }).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute();
  await db.updateTable('api_tokens').set({ revoked_at: now }).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute();
}

/** `revokeFamily` within a merchant's scope (an operator revoking one of its tokens): a family belongs to one merchant's client. */
export const revokeFamilyIn = (scope: MerchantScope<Trx>, familyId: string, now: number) => revokeFamily(handleOf(scope), familyId, now);
