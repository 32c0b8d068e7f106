import type { Actor } from '../domain/audit.ts';
import { fieldError, notFound } from '../domain/errors.ts';
import { parseId } from '../domain/ids.ts';
import { formatInstant } from '../domain/time.ts';
import type { Db } from '../store/db.ts';
import { clientsPage, countClients } from '../store/credentials.repository.ts';
import * as repo from '../store/merchants.repository.ts';
import { listOpenInvitations, listTeam } from '../store/merchant-users.repository.ts';
import type { MerchantScope } from '../store/tenancy.ts';
import { revokeTokenOf } from './merchants.service.ts';

/** The console's merchant page lists the merchant's tokens and clients this many at a time. */
const CREDENTIALS_PAGE = 50;
/** Their counts stop here ("10,000 or more"). */
const CREDENTIALS_COUNT_CAP = 10_000;

/** Where the merchant page's two lists stand: tokens older than `tokensBefore`, clients after `clientsAfter` (ids; blank: the first page). */
export interface CredentialsPosition {
  tokensBefore?: string;
  clientsAfter?: string;
}

function positionId(text: string | undefined, field: string): number | null {
  const t = (text ?? '').trim();
  if (t === '') return null;
  const id = parseId(t);
  if (id === null) throw fieldError(field, 'is not a position this page gave (follow its link)');
  return id;
}

/** A merchant as the console names it. */
export async function merchantSummary(scope: MerchantScope) {
  const merchant = await repo.merchantOfScope(scope);
  if (!merchant) throw notFound('merchant');
  return {
    id: String(merchant.id),
    name: merchant.name,
    status: merchant.status,
    clientId: merchant.client_id,
    requireTwoFactor: merchant.require_two_factor === 1,
    createdAt: formatInstant(merchant.created_at),
  };
}

/**
 * A merchant with its OAuth clients (oldest first) and bearer tokens (newest first), as the
 * console shows them, a keyset page of each (issue 29, item 12): `counts` say where each page
 * stands, `next` is the position of the following page (null on the last). Never a secret (only
 * hashes are stored; a secret is shown once, by the request that created it).
 */
export async function merchantCredentials(scope: MerchantScope, now: number, position: CredentialsPosition = {}, pageSize = CREDENTIALS_PAGE) {
  const tokensBefore = positionId(position.tokensBefore, 'tokensBefore');
  const clientsAfter = positionId(position.clientsAfter, 'clientsAfter');
  const merchant = await merchantSummary(scope);
  const [tokenRows, tokensAbout, tokensShownBefore, clientRows, clientsAbout, clientsShownBefore] = await Promise.all([
    repo.tokensOfMerchant(scope, tokensBefore, pageSize + 1),
    repo.countTokensOfMerchant(scope, CREDENTIALS_COUNT_CAP, null),
    tokensBefore === null ? 0 : repo.countTokensOfMerchant(scope, CREDENTIALS_COUNT_CAP, tokensBefore),
    clientsPage(scope, clientsAfter, pageSize + 1),
    countClients(scope, CREDENTIALS_COUNT_CAP, null),
    clientsAfter === null ? 0 : countClients(scope, CREDENTIALS_COUNT_CAP, clientsAfter),
  ]);
  const tokens = tokenRows.slice(0, pageSize);
  const clients = clientRows.slice(0, pageSize);
  const counts = (shownBefore: number, shown: number, about: number) => ({
    first: shown ? shownBefore + 1 : 0,
    last: shownBefore + shown,
    about,
    capped: about >= CREDENTIALS_COUNT_CAP,
  });
  return {
    merchant,
    position: { tokensBefore: tokensBefore === null ? '' : String(tokensBefore), clientsAfter: clientsAfter === null ? '' : String(clientsAfter) },
    tokensPage: {
      counts: counts(tokensShownBefore, tokens.length, tokensAbout),
      next: tokenRows.length > pageSize ? String(tokens.at(-1)!.id) : null,
    },
    clientsPage: {
      counts: counts(clientsShownBefore, clients.length, clientsAbout),
      next: clientRows.length > pageSize ? String(clients.at(-1)!.id) : null,
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
export const revokeMerchantToken = (merchant: MerchantScope<Db>, actor: Actor, tokenId: number, now: number) => revokeTokenOf(merchant, actor, tokenId, now);

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
