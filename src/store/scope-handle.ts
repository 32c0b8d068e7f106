import type { Handle } from './db.ts';

/**
 * The key a tenant scope (`MerchantScope`, `AllMerchants`, store/scope-mint.ts) keeps its database
 * handle under, and the one way to read it. For store/ only: a scope's handle reaches every
 * merchant's rows, so code outside store/ that held it could step out of the scope and read
 * another merchant's rows by raw id (issue 30, rule 1). The scope's public surface (its scoped
 * query builders and `merchantId`) has no `handle`; this key is a symbol, so a file that does not
 * import this module cannot name the property, and dependency-cruiser's `scope-handle-only-in-store`
 * (.dependency-cruiser.cjs) fails the build when a file outside src/store/ imports it (type-only
 * imports included). test/unit/scope-stays-closed.test.ts checks the same from the source text.
 */
export const HANDLE: unique symbol = Symbol('tenant scope handle');

/** The handle under a scope (a transaction when the scope was made from one). store/ only. */
export const handleOf = <H extends Handle>(scope: { readonly [HANDLE]: H }): H => scope[HANDLE];
