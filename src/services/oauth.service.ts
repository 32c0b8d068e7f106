import type { StockistEnv } from '../domain/vocabulary.ts';
import { grantedScopes, invalidClient, invalidGrant, OAuthError, type ClientCredentials } from '../domain/oauth.ts';
import { environmentOfRefreshToken, hashSecret, newAccessToken, newRefreshToken, randomToken, secretsEqual } from '../domain/secrets.ts';
import type { Scope } from '../schemas/admin.ts';
import type { Db, Handle, Trx } from '../store/db.ts';
import * as clients from '../store/credentials.repository.ts';
import * as merchants from '../store/merchants.repository.ts';
import * as refresh from '../store/oauth.repository.ts';

export interface OAuthSettings {
  env: StockistEnv;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
}

/** RFC 6749 §5.1. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/**
 * Admits one more grant for an authenticated client, or throws (429 `rate_limited`): successful
 * grants per client are bounded (SPEC §2.4). Called after every check that could refuse the grant
 * and before anything is written, so a refusal writes nothing, and only for a client that proved
 * its secret, so nobody else can drain the client's allowance.
 */
export type GrantGate = (clientId: string) => Promise<void>;

const admitAll: GrantGate = async () => undefined;

// Compared against when the client id is unknown, so the answer takes as long as for a known one.
const NO_SUCH_CLIENT = hashSecret('no such client');

type Client = NonNullable<Awaited<ReturnType<typeof clients.findLiveClientById>>>;

/** A client's last use is recorded at a grant, at most this often (grants are bounded anyway). */
const CLIENT_USED_EVERY_MS = 5 * 60_000;

/**
 * The OAuth client behind credentials (one of its merchant's clients, not revoked); unknown id,
 * revoked client and wrong secret are the same answer. The secret a rotation replaced is accepted
 * until its grace period ends (`previous_secret_expires_at`, exclusive), then never again.
 */
async function authenticateClient(db: Handle, credentials: ClientCredentials, now: number): Promise<Client> {
  const client = credentials.clientId.length <= 128 ? await clients.findLiveClientById(db, credentials.clientId) : undefined;
  const presented = hashSecret(credentials.clientSecret);
  const previousLive = client?.previousSecretHash != null && client.previousSecretExpiresAt != null && now < client.previousSecretExpiresAt;
  // Both comparisons always run, so the answer takes as long whichever secret (or none) matches.
  const currentOk = secretsEqual(presented, client?.secretHash ?? NO_SUCH_CLIENT);
  const previousOk = secretsEqual(presented, (previousLive && client?.previousSecretHash) || NO_SUCH_CLIENT);
  if (!client || !(currentOk || (previousLive && previousOk))) throw invalidClient('unknown client or wrong client secret');
  if (client.merchantStatus !== 'active') throw new OAuthError(400, 'unauthorized_client', 'merchant account is disabled');
  return client;
}

async function issuePair(db: Trx, settings: OAuthSettings, client: Client, scopes: Scope[], familyId: string, now: number): Promise<TokenResponse> {
  const { merchantId } = client;
  await clients.noteClientUsed(db, client.id, now, now - CLIENT_USED_EVERY_MS);
  const accessToken = newAccessToken(settings.env);
  const refreshToken = newRefreshToken(settings.env);
  await merchants.insertToken(
    db,
    {
      merchantId,
      tokenHash: hashSecret(accessToken),
      environment: settings.env,
      scopes,
      expiresAt: now + settings.accessTokenTtlSeconds * 1000,
      kind: 'oauth',
      familyId,
      oauthClientId: client.id,
    },
    now,
  );
  await refresh.insertRefreshToken(
    db,
    {
      merchantId,
      familyId,
      tokenHash: hashSecret(refreshToken),
      environment: settings.env,
      scopes,
      expiresAt: now + settings.refreshTokenTtlSeconds * 1000,
      oauthClientId: client.id,
    },
    now,
  );
  return { access_token: accessToken, token_type: 'Bearer', expires_in: settings.accessTokenTtlSeconds, refresh_token: refreshToken, scope: scopes.join(' ') };
}

/** RFC 6749 §4.4: a new access token and the first refresh token of a new family. */
export async function clientCredentialsGrant(
  db: Db,
  settings: OAuthSettings,
  credentials: ClientCredentials,
  scope: string | undefined,
  now: number,
  admit: GrantGate = admitAll,
): Promise<TokenResponse> {
  const client = await authenticateClient(db, credentials, now);
  const scopes = grantedScopes(scope);
  await admit(client.clientId);
  return db.transaction().execute((trx) => issuePair(trx, settings, client, scopes, `fam_${randomToken(24)}`, now));
}

const OTHER_ENV: Record<StockistEnv, string> = {
  production: 'this is a sandbox refresh token (stkr_test_); this server is production',
  sandbox: 'this is a production refresh token (stkr_live_); this server is the sandbox',
};

/**
 * RFC 6749 §6 with rotation: the refresh token is consumed and a new pair issued in its family.
 * Presenting a consumed token again means it leaked (or a client replayed it): the whole family —
 * every refresh and access token descended from the same client-credentials grant — is revoked.
 */
export async function refreshTokenGrant(
  db: Db,
  settings: OAuthSettings,
  credentials: ClientCredentials,
  refreshToken: string,
  scope: string | undefined,
  now: number,
  admit: GrantGate = admitAll,
): Promise<TokenResponse> {
  const client = await authenticateClient(db, credentials, now);
  const tokenEnv = environmentOfRefreshToken(refreshToken);
  if (tokenEnv !== null && tokenEnv !== settings.env) throw invalidGrant(OTHER_ENV[settings.env]);
  const row = tokenEnv === null ? undefined : await refresh.findRefreshTokenByHash(db, hashSecret(refreshToken));
  // Another client's refresh token is answered like an unknown one (tokens from before 0022 name no client: their merchant's).
  if (!row || row.merchant_id !== client.merchantId || (row.oauth_client_id !== null && row.oauth_client_id !== client.id))
    throw invalidGrant('unknown refresh token');
  if (row.revoked_at !== null) throw invalidGrant('refresh token revoked');
  if (row.used_at !== null) {
    await db.transaction().execute((trx) => refresh.revokeFamily(trx, row.family_id, now));
    throw invalidGrant('refresh token already used; every token issued from it has been revoked, request a new grant');
  }
  if (row.expires_at <= now) throw invalidGrant('refresh token expired');
  const scopes = grantedScopes(scope, row.scopes.split(' '));
  await admit(client.clientId);
  const issued = await db.transaction().execute(async (trx) => {
    if (!(await refresh.claimRefreshToken(trx, row.id, now))) return null;
    return issuePair(trx, settings, client, scopes, row.family_id, now);
  });
  if (issued) return issued;
  // A concurrent request consumed it between our read and our claim: the same reuse.
  await db.transaction().execute((trx) => refresh.revokeFamily(trx, row.family_id, now));
  throw invalidGrant('refresh token already used; every token issued from it has been revoked, request a new grant');
}
