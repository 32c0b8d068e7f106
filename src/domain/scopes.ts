import { fieldError } from './errors.ts';

/** What a merchant token may do (SPEC §2.3); one list for the schemas, the token endpoint and the CLI. */
export const SCOPES = ['catalog:read', 'stock:read', 'orders:read', 'orders:write', 'refunds:write', 'account:read', 'claims:read', 'claims:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** The scopes that only read: what a token form starts with ticked (least privilege). */
export const READ_SCOPES: readonly Scope[] = SCOPES.filter((s) => s.endsWith(':read'));

/**
 * The scopes a person ticked on a token form of either front end (the console's token issue, the
 * business manager's personal token), in SPEC order. Least privilege, one rule for both: nothing
 * ticked is refused, never read as "every scope" (docs/decisions.md, "Token forms: least
 * privilege"). The operator API and CLI keep SPEC §2.1's default (no `scopes`: all of them).
 */
export function tickedScopes(ticked: string | readonly string[] | undefined): Scope[] {
  const chosen = ticked === undefined ? [] : [ticked].flat();
  const scopes = SCOPES.filter((s) => chosen.includes(s));
  if (scopes.length === 0) throw fieldError('scopes', `tick at least one scope: a token gets only what is ticked (${READ_SCOPES.join(', ')} to only read)`);
  return scopes;
}
