/** What a merchant token may do (SPEC §2.3); one list for the schemas, the token endpoint and the CLI. */
export const SCOPES = ['catalog:read', 'stock:read', 'orders:read', 'orders:write', 'refunds:write', 'account:read'] as const;
export type Scope = (typeof SCOPES)[number];
