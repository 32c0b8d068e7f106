import formbody from '@fastify/formbody';
import { httpHeaders, toAppError } from '../../errors.ts';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../../config.ts';
import { clientCredentials, invalidRequest, OAuthError } from '../../../domain/oauth.ts';
import { hashSecret } from '../../../domain/secrets.ts';
import { msUntil } from '../../../domain/token-bucket.ts';
import { OAuthErrorBody, TokenRequest, TokenResponse } from '../../../schemas/oauth.ts';
import { clientCredentialsGrant, refreshTokenGrant, type TokenResponse as IssuedTokens } from '../../../services/oauth.service.ts';
import type { Clock } from '../../../domain/time.ts';
import type { Store } from '../../../store/db.ts';
import { bodyLimitsFor } from '../../limits.ts';
import type { BucketStore } from '../../rate-limit.ts';

/** RFC 6749 §5.1: token responses (and errors) must not be cached. */
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/** Failures that may be guessing: a wrong secret or a refresh token that does not work. */
const COUNTED = new Set(['invalid_client', 'invalid_grant']);

/** A failed attempt refills every 30 s: OAUTH_FAILURE_LIMIT quick tries, then about two a minute. */
const FAILURE_REFILL_MS = 30_000;

/** Any error of the token endpoint as an RFC 6749 §5.2 body: the API's mapping (toAppError), in OAuth's vocabulary. */
function toOAuthError(thrown: FastifyError | Error, request: FastifyRequest): OAuthError {
  if (thrown instanceof OAuthError) return thrown;
  const { error, status, cause } = toAppError(thrown, request);
  if (cause === 'validation') {
    if (request.body === undefined || request.body === null) return invalidRequest('grant_type is required: send the token request parameters in the body');
    const first = error.errors?.[0];
    return invalidRequest(first ? `${first.field}: ${first.message}` : 'malformed request');
  }
  if (cause === 'framework' && status === 415) return invalidRequest('send the parameters as application/x-www-form-urlencoded (or application/json)');
  if (cause === 'framework' && status !== 413) {
    const code = (thrown as FastifyError).code;
    const body = thrown instanceof SyntaxError || (typeof code === 'string' && code.startsWith('FST_ERR_CTP_'));
    return invalidRequest(body ? `malformed body: ${thrown.message}` : thrown.message);
  }
  if (status === 503) return new OAuthError(503, 'temporarily_unavailable', error.message, httpHeaders(error));
  if (status >= 500) return new OAuthError(500, 'server_error', 'internal error; quote the X-Request-Id header when contacting support');
  // Refusals raised before the handler (plain HTTP in production), and Fastify's (413): same status, RFC-shaped body.
  return new OAuthError(status, 'invalid_request', error.message, httpHeaders(error));
}

/**
 * `POST /openapi/oauth/token` (SPEC §2.2, RFC 6749 §4.4 and §6). Outside the merchant auth hook
 * and the envelope; answers RFC 6749 §5.1/§5.2 bodies. Form bodies are parsed here only: every
 * other route keeps refusing non-JSON bodies with 415/41500.
 */
/** `now`: the app's clock (tests move it to see a rotated secret's grace period end). */
export const oauthTokenRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config; buckets: BucketStore; now?: Clock }> = async (
  app,
  { store, config, buckets, now = Date.now },
) => {
  await app.register(formbody);
  const failureLimits = { capacity: config.oauthFailureLimit, refillMs: config.oauthFailureLimit * FAILURE_REFILL_MS };
  const grantLimits = { capacity: config.oauthGrantBurst, refillMs: (config.oauthGrantBurst * 60_000) / config.oauthGrantsPerMinute };

  /**
   * The bound on successful grants per client (SPEC §2.4), keyed by a hash of the client id (random,
   * so unique across deployments sharing a Redis). One atomic take per grant, so concurrent grants
   * cannot pass it either.
   */
  const admitGrant = async (clientId: string) => {
    const taken = await buckets.take(`grant:${hashSecret(clientId).slice(0, 32)}`, grantLimits, 1).catch(() => null);
    if (taken === null || taken.allowed) return;
    const retryAfter = Math.max(1, Math.ceil(msUntil(taken.tokens, 1, grantLimits) / 1000));
    throw new OAuthError(
      429,
      'rate_limited',
      `too many tokens issued to this client (${config.oauthGrantsPerMinute} a minute, bursts of ${config.oauthGrantBurst}); reuse the access token you have until it expires, or retry after ${retryAfter} s`,
      { 'Retry-After': String(retryAfter) },
    );
  };

  /**
   * Counts an attempt of `clientId` from the request's address (as the nearest trusted proxy saw
   * it: TRUST_PROXY) before its secret is checked: one atomic take, so however many attempts run at
   * once — here or on other instances sharing Redis — at most the bucket's tokens get checked. The
   * returned function gives the token back, for an attempt that turned out not to be a guess.
   */
  async function countAttempt(request: FastifyRequest, clientId: string): Promise<() => Promise<void>> {
    const key = `fail:${hashSecret(`${clientId}\n${request.ip}`).slice(0, 32)}`;
    // Redis unreachable or too slow: refuse rather than check an attempt nobody counted — letting it
    // through (as the merchant rate limit does) would hand a guesser who can slow Redis down
    // unlimited tries. Tokens already issued keep working.
    const taken = await buckets.take(key, failureLimits, 1).catch(() => null);
    if (taken === null) throw new OAuthError(503, 'temporarily_unavailable', 'cannot count this attempt right now; retry shortly', { 'Retry-After': '1' });
    if (!taken.allowed) {
      // Per client and address: too many failures lock that pair out for a while, even with the
      // right secret, so a secret cannot be guessed; other clients and addresses are unaffected.
      const retryAfter = Math.max(1, Math.ceil(msUntil(taken.tokens, 1, failureLimits) / 1000));
      // Attempts still being checked hold their token too, so a burst of simultaneous requests larger
      // than the limit is refused in part even with the right secret: the message says so.
      throw new OAuthError(429, 'rate_limited', `too many failed (or simultaneous) attempts for this client from this address; retry after ${retryAfter} s`, {
        'Retry-After': String(retryAfter),
      });
    }
    return async () => void (await buckets.take(key, failureLimits, -1).catch(() => undefined));
  }

  app.setErrorHandler(async (error: FastifyError, request, reply: FastifyReply) => {
    const e = toOAuthError(error, request);
    return reply
      .code(e.status)
      .headers({ ...NO_STORE, ...e.headers })
      .type('application/json; charset=utf-8')
      .send({ error: e.error, error_description: e.description });
  });

  const { bodyLimit, maxJsonValues } = bodyLimitsFor('token', config);
  app.post(
    '/token',
    {
      // Anyone may call this route without a token: a few hundred bytes is all a token request needs.
      bodyLimit,
      config: { envelope: false, maxJsonValues },
      schema: {
        operationId: 'issueToken',
        summary: 'OAuth 2.0 token endpoint (client credentials, refresh)',
        description:
          'RFC 6749 §4.4 and §6. Client authentication by HTTP Basic or `client_id`/`client_secret` in the body; form-encoded or JSON. ' +
          '`grant_type=refresh_token` rotates the refresh token; presenting a used one revokes its family. Errors are RFC 6749 §5.2 bodies, not the envelope.',
        tags: ['OAuth'],
        body: TokenRequest,
        response: { 200: TokenResponse, '4xx': OAuthErrorBody, '5xx': OAuthErrorBody },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      if (!body.grant_type) throw invalidRequest('grant_type is required');
      if (body.grant_type !== 'client_credentials' && body.grant_type !== 'refresh_token') {
        throw new OAuthError(400, 'unsupported_grant_type', `grant_type ${body.grant_type} is not supported; use client_credentials or refresh_token`);
      }
      const credentials = clientCredentials(request.headers.authorization, body);
      const refreshToken = body.refresh_token;
      if (body.grant_type === 'refresh_token' && !refreshToken) throw invalidRequest('refresh_token is required');
      const settings = { env: config.env, accessTokenTtlSeconds: config.accessTokenTtlSeconds, refreshTokenTtlSeconds: config.refreshTokenTtlSeconds };
      const giveBack = await countAttempt(request, credentials.clientId);
      let issued: IssuedTokens;
      try {
        issued =
          refreshToken && body.grant_type === 'refresh_token'
            ? await refreshTokenGrant(store.db, settings, credentials, refreshToken, body.scope, now(), admitGrant)
            : await clientCredentialsGrant(store.db, settings, credentials, body.scope, now(), admitGrant);
      } catch (error) {
        // Only a wrong secret or a refresh token that does not work may be guessing.
        if (!(error instanceof OAuthError && COUNTED.has(error.error))) await giveBack();
        throw error;
      }
      await giveBack();
      reply.headers(NO_STORE);
      return issued;
    },
  );
};
