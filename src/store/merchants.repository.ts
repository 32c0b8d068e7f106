import { sql, type Selectable } from 'kysely';
import { countUpTo, likeContaining, type Handle, type Trx } from './db.ts';
import type { ApiTokensTable, MerchantsTable } from './schema.ts';
import { isMerchantScope, type MerchantScope, type TenantScope } from './tenancy.ts';
import { handleOf } from './scope-handle.ts';

export type Merchant = Selectable<MerchantsTable>;
export type ApiToken = Selectable<ApiTokensTable>;

/** The merchant and its first OAuth client (the same id and secret: `merchants.client_id` stays the merchant's stable key). */
export async function insertMerchant(db: Trx, m: { name: string; clientId: string; clientSecretHash: string }, now: number): Promise<Merchant> {
  const merchant = await db
    .insertInto('merchants')
    .values({ name: m.name, status: 'active', client_id: m.clientId, client_secret_hash: m.clientSecretHash, created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
  await db
    .insertInto('oauth_clients')
    .values({ merchant_id: merchant.id, client_id: m.clientId, client_secret_hash: m.clientSecretHash, name: 'Default client', created_at: now })
    .execute();
  return merchant;
}

export async function setRequireTwoFactor(db: Trx, id: number, required: boolean, now: number): Promise<void> {
  await db
    .updateTable('merchants')
    .set({ require_two_factor: required ? 1 : 0, updated_at: now })
    .where('id', '=', id)
    .execute();
}

export const listMerchants = (db: Handle) => db.selectFrom('merchants').selectAll().orderBy('id').execute();

/** The names of these merchants (lists show names, not ids); one query for a page. */
export async function merchantNames(db: Handle, ids: readonly number[]): Promise<Map<number, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('merchants').select(['id', 'name']).where('id', 'in', unique).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** `merchantNames` for a reader of merchant-owned rows (a merchant's scope or the operator's view): the names of the merchants its rows belong to. */
export const merchantNamesOf = (reader: TenantScope, ids: readonly number[]) => merchantNames(handleOf(reader), ids);

/** Any merchant at all (the demo seed fills only an empty database). */
export const anyMerchant = (db: Handle) => db.selectFrom('merchants').select('id').limit(1).executeTakeFirst();

/** The oldest merchant of this name (the demo merchant is found by its name). */
export const findMerchantByName = (db: Handle, name: string) =>
  db.selectFrom('merchants').select('id').where('name', '=', name).orderBy('id').executeTakeFirst();

export const findMerchant = (db: Handle, id: number) => db.selectFrom('merchants').selectAll().where('id', '=', id).executeTakeFirst();

/** The scope's own merchant (undefined when there is no such merchant: an operator's route named an unknown one). */
export const merchantOfScope = (scope: MerchantScope) => findMerchant(handleOf(scope), scope.merchantId);

export async function setMerchantStatus(db: Trx, id: number, status: Merchant['status'], now: number): Promise<Merchant | undefined> {
  return db.updateTable('merchants').set({ status, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirst();
}

/** `setMerchantStatus` of the scope's own merchant. */
export const setStatusOfScopeMerchant = (scope: MerchantScope<Trx>, status: Merchant['status'], now: number) =>
  setMerchantStatus(handleOf(scope), scope.merchantId, status, now);

export async function insertToken(
  db: Trx,
  t: {
    merchantId: number;
    tokenHash: string;
    environment: ApiToken['environment'];
    scopes: string[];
    expiresAt: number | null;
    kind?: ApiToken['kind'];
    familyId?: string;
    oauthClientId?: number;
    name?: string;
  },
  now: number,
): Promise<ApiToken> {
  return db
    .insertInto('api_tokens')
    .values({
      merchant_id: t.merchantId,
      token_hash: t.tokenHash,
      environment: t.environment,
      scopes: t.scopes.join(' '),
      expires_at: t.expiresAt,
      revoked_at: null,
      created_at: now,
      kind: t.kind ?? 'operator',
      family_id: t.familyId ?? null,
      oauth_client_id: t.oauthClientId ?? null,
      name: t.name ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** `insertToken` for the scope's merchant: a service issuing a token within a scope names no merchant number. */
export const insertTokenIn = (scope: MerchantScope<Trx>, t: Omit<Parameters<typeof insertToken>[1], 'merchantId'>, now: number): Promise<ApiToken> =>
  insertToken(handleOf(scope), { ...t, merchantId: scope.merchantId }, now);

export const findToken = (db: Handle, id: number) => db.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst();

/** One of the scope's merchant's tokens by id: another merchant's token is not found here. */
export const findTokenIn = (scope: MerchantScope, id: number) => scope.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst();

/**
 * Revokes one of the scope's merchant's tokens (a revoked one is returned as it is): another
 * merchant's token is not found (undefined). The operator's revocation comes here too, once the
 * token has named its merchant.
 */
export async function revokeTokenIn(scope: MerchantScope<Trx>, id: number, now: number): Promise<ApiToken | undefined> {
  const row = await findTokenIn(scope, id);
  if (!row || row.revoked_at !== null) return row;
  return scope.updateTable('api_tokens').set({ revoked_at: now }).where('id', '=', id).returningAll().executeTakeFirst();
}

/** The token with its merchant's status, looked up by the token's hash. */
export async function findTokenByHash(db: Handle, tokenHash: string) {
  return db
    .selectFrom('api_tokens')
    .innerJoin('merchants', 'merchants.id', 'api_tokens.merchant_id')
    .select([
      'api_tokens.id as tokenId',
      'api_tokens.merchant_id as merchantId',
      'api_tokens.environment as environment',
      'api_tokens.scopes as scopes',
      'api_tokens.expires_at as expiresAt',
      'api_tokens.revoked_at as revokedAt',
      'api_tokens.last_used_at as lastUsedAt',
      'merchants.status as merchantStatus',
      'merchants.client_id as clientId',
    ])
    .where('api_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/**
 * A merchant's bearer tokens, newest first, `limit` of them older than `beforeId` (or from the
 * newest): a keyset walk of (merchant_id, id) (migration 0041). Hashes stay here: the caller gets none.
 */
export const tokensOfMerchant = (scope: MerchantScope, beforeId: number | null, limit: number) => {
  let q = handleOf(scope)
    .selectFrom('api_tokens')
    .select(['id', 'merchant_id', 'environment', 'scopes', 'kind', 'name', 'expires_at', 'revoked_at', 'created_at'])
    .where('merchant_id', '=', scope.merchantId);
  if (beforeId !== null) q = q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(limit).execute();
};

/**
 * How many bearer tokens the merchant has, counting at most `cap`; with `fromId`, only that one and
 * newer ones (those the pages before showed).
 */
export async function countTokensOfMerchant(scope: MerchantScope, cap: number, fromId: number | null): Promise<number> {
  let inner = scope.selectFrom('api_tokens').select('id');
  if (fromId !== null) inner = inner.where('id', '>=', fromId);
  return countUpTo(handleOf(scope), inner, cap);
}

/**
 * Merchants whose name contains `text` (case-insensitive, `%` and `_` literal), for the operator's
 * order search: a scan of the merchants table, which is small. None for a merchant's scope (every
 * order it sees is its own; another merchant's name must not reach its search).
 */
export async function merchantIdsNamedLike(reader: TenantScope, text: string): Promise<number[]> {
  if (isMerchantScope(reader)) return [];
  const rows = await handleOf(reader)
    .selectFrom('merchants')
    .select('id')
    .where(sql<boolean>`lower(name) like ${likeContaining(text)} escape '\\'`)
    .execute();
  return rows.map((r) => r.id);
}
