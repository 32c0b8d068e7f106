import { SCOPES, type Scope } from './scopes.ts';
import { fieldError } from './errors.ts';
import { textProblem } from './text.ts';

/**
 * An RFC 6749 §5.2 error of the token endpoint. It is answered as `{error, error_description}`,
 * not in the envelope (SPEC §2.2), by the token endpoint's own error handler.
 */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error:
      | 'invalid_request'
      | 'invalid_client'
      | 'invalid_grant'
      | 'unauthorized_client'
      | 'unsupported_grant_type'
      | 'invalid_scope'
      | 'rate_limited'
      | 'server_error'
      | 'temporarily_unavailable',
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

export const invalidRequest = (description: string) => new OAuthError(400, 'invalid_request', description);
/** RFC 7235 requires a challenge on every 401; RFC 6749 names Basic as the scheme to offer. */
export const invalidClient = (description: string) =>
  new OAuthError(401, 'invalid_client', description, { 'WWW-Authenticate': 'Basic realm="stockist", charset="UTF-8"' });
export const invalidGrant = (description: string) => new OAuthError(400, 'invalid_grant', description);
const invalidScope = (description: string) => new OAuthError(400, 'invalid_scope', description);

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** How the client authenticated (RFC 6749 §2.3.1): HTTP Basic or body parameters. */
  via: 'basic' | 'body';
}

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64. */
function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw invalidClient('malformed HTTP Basic credentials');
  }
}

/** The client id and secret of HTTP Basic credentials, or null when the header is not Basic. */
export function parseBasic(authorization: string | undefined): { clientId: string; clientSecret: string } | null {
  const match = /^Basic\s+(\S*)\s*$/i.exec(authorization ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (!/^[A-Za-z0-9+/]+=*$/.test(match[1]) || colon < 0) throw invalidClient('malformed HTTP Basic credentials');
  const credentials = { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
  // SPEC §1 Text holds for what the header carries, too: a NUL must never reach a query.
  const problem = textProblem(credentials.clientId) ?? textProblem(credentials.clientSecret);
  if (problem) throw invalidRequest(`authorization: the HTTP Basic credentials ${problem}`);
  return credentials;
}

/**
 * Who the client says it is: HTTP Basic or `client_id` + `client_secret` in the body, never both
 * (RFC 6749 §2.3: a client must not use more than one method).
 */
export function clientCredentials(authorization: string | undefined, body: { client_id?: string; client_secret?: string }): ClientCredentials {
  const basic = parseBasic(authorization);
  if (basic) {
    if (body.client_secret !== undefined) throw invalidRequest('send the client credentials either with HTTP Basic or in the body, not both');
    if (body.client_id !== undefined && body.client_id !== basic.clientId) throw invalidRequest('client_id in the body differs from the HTTP Basic client');
    return { ...basic, via: 'basic' };
  }
  if (!body.client_id) throw invalidClient('client authentication required: HTTP Basic, or client_id and client_secret in the body');
  if (!body.client_secret) throw invalidClient('client_secret is required');
  return { clientId: body.client_id, clientSecret: body.client_secret, via: 'body' };
}

/**
 * The scopes a token request asks for (RFC 6749 §3.3: space-delimited), within what it may have;
 * no `scope` means all it may have.
 */
export function grantedScopes(requested: string | undefined, allowed: readonly string[] = SCOPES): Scope[] {
  if (requested === undefined || requested.trim() === '') return SCOPES.filter((s) => allowed.includes(s));
  const asked = new Set(requested.trim().split(/ +/));
  const unknown = [...asked].filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw invalidScope(`unknown scope ${unknown.join(' ')}; scopes are ${SCOPES.join(' ')}`);
  const beyond = [...asked].filter((s) => !allowed.includes(s));
  if (beyond.length) throw invalidScope(`scope ${beyond.join(' ')} exceeds the scope originally granted (${allowed.join(' ')})`);
  return SCOPES.filter((s) => asked.has(s));
}

/** The longest an OAuth client's replaced secret may keep working after a rotation. */
export const MAX_ROTATION_GRACE_HOURS = 24;

/**
 * The grace period of a client secret rotation, in hours as typed on the form (whole hours,
 * 0–24; empty: 0, the old secret stops at once). Anything else is refused before anything is written.
 */
export function rotationGraceHours(raw: string | undefined): number {
  const text = (raw ?? '').trim();
  if (text === '') return 0;
  const hours = /^[0-9]{1,2}$/.test(text) ? Number(text) : Number.NaN;
  if (!(hours >= 0 && hours <= MAX_ROTATION_GRACE_HOURS))
    throw fieldError('graceHours', `must be a whole number of hours from 0 to ${MAX_ROTATION_GRACE_HOURS} (0: the old secret stops at once)`);
  return hours;
}
