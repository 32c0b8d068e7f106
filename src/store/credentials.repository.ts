import type { Selectable } from 'kysely';
import type { StockistEnv } from '../domain/vocabulary.ts';
import { countUpTo, type Handle, type Trx } from './db.ts';
import type { OAuthClientsTable } from './schema.ts';
import type { MerchantScope } from './tenancy.ts';
import { handleOf } from './scope-handle.ts';

/** OAuth clients (several per merchant) and personal access tokens, as the business manager lists them. */

export type OAuthClient = Selectable<OAuthClientsTable>;

export async function insertClient(scope: MerchantScope<Trx>, c: { clientId: string; secretHash: string; name: string }, now: number): Promise<OAuthClient> {
  return scope
    .insertInto('oauth_clients', {
      client_id: c.clientId,
      client_secret_hash: c.secretHash,
      name: c.name,
      created_at: now,
      rotated_at: null,
      last_used_at: null,
      revoked_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow() as Promise<OAuthClient>;
}

export const listClients = (scope: MerchantScope) => scope.selectFrom('oauth_clients').selectAll().orderBy('id').execute();

/** The merchant's OAuth clients, oldest first, `limit` of them after `afterId` (or from the first): a keyset walk of (merchant_id, id). */
export const clientsPage = (scope: MerchantScope, afterId: number | null, limit: number) => {
  let q = scope.selectFrom('oauth_clients').selectAll();
  if (afterId !== null) q = q.where('id', '>', afterId);
  return q.orderBy('id').limit(limit).execute();
};

/** How many OAuth clients the merchant has, at most `cap`; with `upToId`, only that one and older ones (those the pages before showed). */
export async function countClients(scope: MerchantScope, cap: number, upToId: number | null): Promise<number> {
  let inner = scope.selectFrom('oauth_clients').select('id');
  if (upToId !== null) inner = inner.where('id', '<=', upToId);
  return countUpTo(handleOf(scope), inner, cap);
}

export const findClient = (scope: MerchantScope, id: number) => scope.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();

/** The token endpoint's lookup: a live client and its merchant. */
export const findLiveClientById = (db: Handle, clientId: string) =>
  db
    .selectFrom('oauth_clients')
    .innerJoin('merchants', 'merchants.id', 'oauth_clients.merchant_id')
    .select([
      'oauth_clients.id as id',
      'oauth_clients.client_id as clientId',
      'oauth_clients.client_secret_hash as secretHash',
      'oauth_clients.previous_secret_hash as previousSecretHash',
      'oauth_clients.previous_secret_expires_at as previousSecretExpiresAt',
      'oauth_clients.merchant_id as merchantId',
      'merchants.status as merchantStatus',
    ])
    .where('oauth_clients.client_id', '=', clientId)
    .where('oauth_clients.revoked_at', 'is', null)
    .executeTakeFirst();

/**
 * A new secret; `previous` is the replaced one while it keeps working (a rotation's grace period),
 * null when it stops at once. Only one previous secret is kept: a second rotation ends the first one's grace.
 */
export async function setClientSecret(
  scope: MerchantScope<Trx>,
  id: number,
  secretHash: string,
  previous: { secretHash: string; expiresAt: number } | null,
  now: number,
): Promise<void> {
  await scope
    .updateTable('oauth_clients')
    .set({
      client_secret_hash: secretHash,
      previous_secret_hash: previous?.secretHash ?? null,
      previous_secret_expires_at: previous?.expiresAt ?? null,
      rotated_at: now,
    })
    .where('id', '=', id)
    .execute();
}

/** Revokes the client and every access and refresh token issued to it. */
export async function revokeClient(scope: MerchantScope<Trx>, id: number, now: number): Promise<void> {
  await scope.updateTable('oauth_clients').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  await scope.updateTable('api_tokens').set({ revoked_at: now }).where('oauth_client_id', '=', id).where('revoked_at', 'is', null).execute();
  await scope.updateTable('oauth_refresh_tokens').set({ revoked_at: now }).where('oauth_client_id', '=', id).where('revoked_at', 'is', null).execute();
}

/** Coarse last use of a client: at a grant, and only when the stored time is older than `since`. */
export async function noteClientUsed(db: Trx, id: number, now: number, since: number): Promise<void> {
  await db
    .updateTable('oauth_clients')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', since)]))
    .execute();
}

/** A merchant's personal tokens of one environment (a server shows its own: stk_test_ on the sandbox, stk_live_ in production). */
export const listPersonalTokens = (scope: MerchantScope, env: StockistEnv) =>
  scope
    .selectFrom('api_tokens')
    .select(['id', 'name', 'scopes', 'environment', 'created_at', 'last_used_at', 'expires_at', 'revoked_at'])
    .where('kind', '=', 'personal')
    .where('environment', '=', env)
    .orderBy('id')
    .execute();

export const findPersonalToken = (scope: MerchantScope, id: number) =>
  scope.selectFrom('api_tokens').selectAll().where('kind', '=', 'personal').where('id', '=', id).executeTakeFirst();

export async function revokePersonalToken(scope: MerchantScope<Trx>, id: number, now: number): Promise<void> {
  await scope.updateTable('api_tokens').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
}

/** Several tokens' last use in one statement (the recorder's flush). */
export async function noteTokensUsed(db: Trx, ids: number[], now: number): Promise<void> {
  if (ids.length > 0) await db.updateTable('api_tokens').set({ last_used_at: now }).where('id', 'in', ids).execute();
}
