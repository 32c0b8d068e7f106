import type { Actor } from '../domain/audit.ts';
import { conflictState, notFound } from '../domain/errors.ts';
import { hashSecret, newAccessToken, randomToken } from '../domain/secrets.ts';
import type { Scope } from '../domain/scopes.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import { auditIn } from '../store/audit.repository.ts';
import * as credentials from '../store/credentials.repository.ts';
import type { Db } from '../store/db.ts';
import { insertTokenIn } from '../store/merchants.repository.ts';
import { transactionIn, type MerchantScope } from '../store/tenancy.ts';

/**
 * A merchant's API credentials as its business manager handles them (SPEC §14): OAuth clients
 * (several per merchant; secret shown once, rotated, revoked) and personal access tokens. Every
 * change is written with its audit row; the caller drops the process's token cache (TokenCache)
 * after a revocation, other processes see it within TOKEN_CACHE_SECONDS.
 */

/** Clients a merchant may hold at once (revoked ones do not count). */
const MAX_CLIENTS = 20;
/** Live personal tokens a merchant may hold at once. */
const MAX_PERSONAL_TOKENS = 50;

const newClientSecret = () => `sks_${randomToken(40)}`;

export async function listCredentials(scope: MerchantScope, env: StockistEnv) {
  const [clients, tokens] = await Promise.all([credentials.listClients(scope), credentials.listPersonalTokens(scope, env)]);
  return { clients, tokens };
}

export async function createClient(merchant: MerchantScope<Db>, actor: Actor, name: string, now: number) {
  return transactionIn(merchant, async (scope) => {
    if ((await credentials.listClients(scope)).filter((c) => c.revoked_at === null).length >= MAX_CLIENTS)
      throw conflictState(`a merchant may hold at most ${MAX_CLIENTS} OAuth clients; revoke one first`);
    const secret = newClientSecret();
    const client = await credentials.insertClient(scope, { clientId: `cli_${randomToken(24)}`, secretHash: hashSecret(secret), name }, now);
    await auditIn(scope, actor, { action: 'oauth_client.create', target: `oauth_client:${client.client_id}`, before: null, after: { name } }, now);
    return { client, secret };
  });
}

async function liveClient(scope: MerchantScope, id: number) {
  const client = await credentials.findClient(scope, id);
  if (!client) throw notFound('OAuth client');
  if (client.revoked_at !== null) throw conflictState('this client is revoked');
  return client;
}

/**
 * A new secret, shown once. The old one keeps working for `graceHours` (0–24, from the form;
 * 0: it stops at once) so programs can switch over; tokens already issued stay valid either way.
 */
export async function rotateClient(merchant: MerchantScope<Db>, actor: Actor, id: number, graceHours: number, now: number) {
  return transactionIn(merchant, async (scope) => {
    const client = await liveClient(scope, id);
    const secret = newClientSecret();
    const oldSecretUntil = graceHours > 0 ? now + graceHours * 3_600_000 : null;
    const previous = oldSecretUntil === null ? null : { secretHash: client.client_secret_hash, expiresAt: oldSecretUntil };
    await credentials.setClientSecret(scope, client.id, hashSecret(secret), previous, now);
    await auditIn(
      scope,
      actor,
      {
        action: 'oauth_client.rotate',
        target: `oauth_client:${client.client_id}`,
        before: null,
        after: { name: client.name, graceHours, oldSecretUntil },
      },
      now,
    );
    return { client, secret, oldSecretUntil };
  });
}

/** The client and every token issued to it stop working. */
export async function revokeClient(merchant: MerchantScope<Db>, actor: Actor, id: number, now: number) {
  await transactionIn(merchant, async (scope) => {
    const client = await liveClient(scope, id);
    await credentials.revokeClient(scope, client.id, now);
    await auditIn(
      scope,
      actor,
      { action: 'oauth_client.revoke', target: `oauth_client:${client.client_id}`, before: { revoked: false }, after: { revoked: true } },
      now,
    );
  });
}

export async function createPersonalToken(
  merchant: MerchantScope<Db>,
  env: StockistEnv,
  actor: Actor,
  input: { name: string; scopes: Scope[]; expiresInDays: number | null },
  now: number,
) {
  return transactionIn(merchant, async (scope) => {
    if ((await credentials.listPersonalTokens(scope, env)).filter((t) => t.revoked_at === null).length >= MAX_PERSONAL_TOKENS)
      throw conflictState(`a merchant may hold at most ${MAX_PERSONAL_TOKENS} personal tokens; revoke one first`);
    const accessToken = newAccessToken(env);
    const expiresAt = input.expiresInDays === null ? null : now + input.expiresInDays * 86_400_000;
    const row = await insertTokenIn(
      scope,
      { tokenHash: hashSecret(accessToken), environment: env, scopes: input.scopes, expiresAt, kind: 'personal', name: input.name },
      now,
    );
    await auditIn(
      scope,
      actor,
      {
        action: 'personal_token.create',
        target: `token:${row.id}`,
        before: null,
        after: { name: input.name, scopes: input.scopes.join(' '), expiresAt },
      },
      now,
    );
    return { tokenId: row.id, accessToken, scopes: input.scopes, expiresAt };
  });
}

export async function revokePersonalToken(merchant: MerchantScope<Db>, actor: Actor, id: number, now: number) {
  await transactionIn(merchant, async (scope) => {
    const token = await credentials.findPersonalToken(scope, id);
    if (!token) throw notFound('personal token');
    if (token.revoked_at !== null) throw conflictState('this token is revoked already');
    await credentials.revokePersonalToken(scope, token.id, now);
    await auditIn(scope, actor, { action: 'personal_token.revoke', target: `token:${token.id}`, before: { revoked: false }, after: { revoked: true } }, now);
  });
}
