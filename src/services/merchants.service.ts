import type { Actor } from '../domain/audit.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import { forbidden, notFound, unauthorized } from '../domain/errors.ts';
import { formatInstant } from '../domain/time.ts';
import { environmentOfToken, hashSecret, newAccessToken, randomToken } from '../domain/secrets.ts';
import { SCOPES, type Scope } from '../schemas/admin.ts';
import { auditIn, insertAudit } from '../store/audit.repository.ts';
import type { Db, Handle } from '../store/db.ts';
import { noteTokensUsed } from '../store/credentials.repository.ts';
import { revokeFamilyIn } from '../store/oauth.repository.ts';
import * as repo from '../store/merchants.repository.ts';
import { transactionIn, type MerchantScope } from '../store/tenancy.ts';

/** The names of these merchants, by id (the console's lists show names, not ids). */
export const merchantNamesById = (db: Handle, ids: readonly number[]) => repo.merchantNames(db, ids);

/** Every merchant, oldest first (the operator's list). */
export const everyMerchant = (db: Handle) => repo.listMerchants(db);

/** Whether a merchant with this id exists, whatever its status. */
export const merchantExists = async (db: Handle, merchantId: number) => (await repo.findMerchant(db, merchantId)) !== undefined;

export interface NewMerchant {
  merchantId: number;
  name: string;
  status: string;
  clientId: string;
  clientSecret: string;
}

/** Names compared as the console's duplicate warning compares them: trimmed, case-insensitive. */
const nameKey = (name: string) => name.trim().toLocaleLowerCase('en');

/** The merchants already named `name` (trimmed, case-insensitive): creating another asks the operator to confirm first. */
export async function merchantsNamed(db: Handle, name: string) {
  const key = nameKey(name);
  return (await repo.listMerchants(db)).filter((m) => nameKey(m.name) === key).map((m) => ({ id: String(m.id), name: m.name, status: m.status }));
}

/** The client secret is shown once, to the caller; the audit row names the merchant and its (public) client id only. */
export async function createMerchant(db: Db, actor: Actor, name: string, now: number): Promise<NewMerchant> {
  const clientId = `cli_${randomToken(24)}`;
  const clientSecret = `sks_${randomToken(40)}`;
  return db.transaction().execute(async (trx) => {
    const m = await repo.insertMerchant(trx, { name, clientId, clientSecretHash: hashSecret(clientSecret) }, now);
    const after = { name: m.name, status: m.status, clientId };
    await insertAudit(trx, actor, { action: 'merchant.create', target: `merchant:${m.id}`, before: null, after }, now);
    return { merchantId: m.id, name: m.name, status: m.status, clientId, clientSecret };
  });
}

export interface IssuedToken {
  tokenId: number;
  merchantId: number;
  accessToken: string;
  scopes: Scope[];
  expiresAt: number | null;
}

/** The token is shown once, to the caller; the audit row holds its id, scopes and expiry, never the token or its hash. */
export async function issueToken(
  merchant: MerchantScope<Db>,
  actor: Actor,
  env: StockistEnv,
  options: { scopes?: Scope[]; expiresInSeconds?: number },
  now: number,
): Promise<IssuedToken> {
  const accessToken = newAccessToken(env);
  const scopes = options.scopes ?? [...SCOPES];
  const expiresAt = options.expiresInSeconds ? now + options.expiresInSeconds * 1000 : null;
  return transactionIn(merchant, async (scope) => {
    const { merchantId } = scope;
    if (!(await repo.merchantOfScope(scope))) throw notFound('merchant');
    const row = await repo.insertTokenIn(scope, { tokenHash: hashSecret(accessToken), environment: env, scopes, expiresAt }, now);
    const after = { merchantId, scopes: scopes.join(' '), expiresAt: formatInstant(expiresAt) };
    await auditIn(scope, actor, { action: 'token.issue', target: `token:${row.id}`, before: null, after }, now);
    return { tokenId: row.id, merchantId, accessToken, scopes, expiresAt };
  });
}

/**
 * Revoking an OAuth access token revokes its refresh-token family too: otherwise the merchant's
 * client would simply refresh its way back in. Revoking a revoked token changes nothing and is
 * not audited again.
 */
export async function revokeToken(db: Db, actor: Actor, tokenId: number, now: number): Promise<{ tokenId: number; revokedAt: number }> {
  // The operator names a token, not its merchant: the token says whose it is (a token never changes merchant).
  const token = await repo.findToken(db, tokenId);
  if (!token) throw notFound('token');
  return revokeTokenOf(token.owner, actor, tokenId, now);
}

/**
 * `revokeToken` of one of this merchant's tokens (the console's merchant page, and the operator's
 * revocation once the token named its merchant): a token of another merchant is not found here
 * (404), read through the scope.
 */
export async function revokeTokenOf(merchant: MerchantScope<Db>, actor: Actor, tokenId: number, now: number): Promise<{ tokenId: number; revokedAt: number }> {
  return transactionIn(merchant, async (scope) => {
    const before = await repo.findTokenIn(scope, tokenId);
    const row = before && (await repo.revokeTokenIn(scope, tokenId, now));
    if (!before || !row) throw notFound('token');
    if (row.family_id) await revokeFamilyIn(scope, row.family_id, now);
    if (before.revoked_at === null) {
      const entry = { before: { merchantId: row.merchant_id, revokedAt: null }, after: { merchantId: row.merchant_id, revokedAt: formatInstant(now) } };
      await auditIn(scope, actor, { action: 'token.revoke', target: `token:${row.id}`, ...entry }, now);
    }
    return { tokenId: row.id, revokedAt: row.revoked_at! };
  });
}

export async function setMerchantStatus(merchant: MerchantScope<Db>, actor: Actor, status: 'active' | 'disabled', now: number) {
  return transactionIn(merchant, async (scope) => {
    const before = await repo.merchantOfScope(scope);
    const row = before && (await repo.setStatusOfScopeMerchant(scope, status, now));
    if (!before || !row) throw notFound('merchant');
    const entry = { target: `merchant:${row.id}`, before: { name: before.name, status: before.status }, after: { name: row.name, status: row.status } };
    await auditIn(scope, actor, { action: status === 'active' ? 'merchant.enable' : 'merchant.disable', ...entry }, now);
    return row;
  });
}

/** Read-only: one cached lookup's principal is handed to every request of that token (TokenCache). */
export interface Principal {
  readonly merchantId: number;
  /**
   * The merchant's OAuth client id: random and never changed, so — unlike `merchantId`, which
   * starts at 1 in every database — it names this merchant uniquely across deployments (the rate
   * limit keys on it, in a Redis that several deployments may share).
   */
  readonly clientId: string;
  readonly tokenId: number;
  readonly scopes: ReadonlySet<string>;
  /** The merchant's rate-limit bucket key, made once per principal (src/http/rate-limit.ts). */
  bucketKey?: string;
}

const principalOf = (row: TokenRow): Principal => ({
  merchantId: row.merchantId,
  clientId: row.clientId,
  tokenId: row.tokenId,
  scopes: new Set(row.scopes.split(' ')),
});

const OTHER_ENV_MESSAGE: Record<StockistEnv, string> = {
  production: 'this is a sandbox token (stk_test_); this server is production and takes stk_live_ tokens',
  sandbox: 'this is a production token (stk_live_); this server is the sandbox and takes stk_test_ tokens',
};

/** Who is calling: the merchant behind a bearer token, or a 401/403 saying exactly why not. */
type TokenRow = NonNullable<Awaited<ReturnType<typeof repo.findTokenByHash>>>;
/** A cached lookup, and the principal made from it on its first use (one per token, not per request). */
interface CachedToken {
  readonly row: TokenRow;
  principal: Principal | null;
  readonly until: number;
}

/**
 * Reuses the lookup of a token that was valid a moment ago (bounded, short-lived): a revocation
 * made through this process clears it before its answer goes out (app.ts, the console and manager
 * plugins: an `onSend` hook on every write); one made elsewhere (another instance, the CLI) is
 * seen within `ttlMs`. A lookup that read the database before a clear is not stored after it
 * (`generation`), so a request in flight during a revocation cannot put the old row back.
 */
export class TokenCache {
  private readonly entries = new Map<string, CachedToken>();
  private cleared = 0;
  constructor(
    private readonly ttlMs: number,
    private readonly max = 10_000,
    /** Told of every `clear` (the other processes of `serve --processes N` drop theirs). */
    private readonly onClear?: () => void,
  ) {}
  /** Taken before a database lookup and handed back to `set`. */
  get generation(): number {
    return this.cleared;
  }
  get(hash: string, now: number): CachedToken | undefined {
    const hit = this.entries.get(hash);
    if (hit && hit.until > now) return hit;
    if (hit) this.entries.delete(hash);
    return undefined;
  }
  set(hash: string, row: TokenRow, now: number, generation: number): void {
    if (this.ttlMs <= 0 || generation !== this.cleared) return;
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { row, principal: null, until: now + this.ttlMs });
  }
  /** A credential changed through this process: every lookup is read again, here and (onClear) elsewhere. */
  clear(): void {
    this.drop();
    this.onClear?.();
  }
  /** Forgets every lookup without telling anyone (another process changed a credential and said so). */
  drop(): void {
    this.entries.clear();
    this.cleared++;
  }
}

/**
 * An `onSend` hook that clears the cache after any write (not GET or HEAD) of the routes it is
 * added to, before the answer leaves: whoever is told "revoked" or "disabled" finds the token
 * refused on the very next request to this process.
 */
export const clearTokensOnWrite =
  (cache: TokenCache) =>
  async <T>(request: { method: string }, _reply: unknown, payload: T): Promise<T> => {
    if (request.method !== 'GET' && request.method !== 'HEAD') cache.clear();
    return payload;
  };

/** A token's last use is written at most this often (issue 20: no write per request). */
const LAST_USED_EVERY_MS = 5 * 60_000;

/**
 * Records when tokens were last used, coarsely: at most once per token per LAST_USED_EVERY_MS in
 * this process, and never on the request's path (the write is not awaited; a failed one is only
 * logged). So a token in steady use costs one small UPDATE per five minutes per process.
 */
export class LastUsedRecorder {
  private readonly written = new Map<number, number>();
  constructor(
    private readonly db: Db,
    private readonly onError: (error: unknown) => void,
    private readonly max = 100_000,
  ) {}
  note(tokenId: number, storedLastUsed: number | null, now: number): void {
    const last = Math.max(this.written.get(tokenId) ?? 0, storedLastUsed ?? 0);
    if (now - last < LAST_USED_EVERY_MS) return;
    if (this.written.size >= this.max) this.written.clear();
    this.written.set(tokenId, now);
    this.db
      .transaction()
      .execute((trx) => noteTokensUsed(trx, [tokenId], now))
      .catch(this.onError);
  }
}

export async function authenticate(
  db: Handle,
  env: StockistEnv,
  token: string | null,
  now: number,
  cache?: TokenCache,
  lastUsed?: LastUsedRecorder,
): Promise<Principal> {
  if (!token) throw unauthorized('missing bearer token: send Authorization: Bearer <token>');
  const tokenEnv = environmentOfToken(token);
  if (tokenEnv !== null && tokenEnv !== env) throw unauthorized(OTHER_ENV_MESSAGE[env]);
  const hash = tokenEnv === null ? null : hashSecret(token);
  const hit = hash === null ? undefined : cache?.get(hash, now);
  let row = hit?.row;
  if (!row && hash !== null) {
    const generation = cache?.generation ?? 0;
    row = await repo.findTokenByHash(db, hash);
    if (row && row.revokedAt === null && row.merchantStatus === 'active') cache?.set(hash, row, now, generation);
  }
  if (!row) throw unauthorized('unknown token');
  if (row.revokedAt !== null) throw unauthorized('token revoked');
  if (row.expiresAt !== null && row.expiresAt <= now) throw unauthorized('token expired');
  if (row.merchantStatus !== 'active') throw forbidden('merchant account is disabled');
  lastUsed?.note(row.tokenId, row.lastUsedAt, now);
  if (hit) {
    hit.principal ??= principalOf(row);
    return hit.principal;
  }
  return principalOf(row);
}
