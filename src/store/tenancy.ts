/**
 * Tenancy's public face (SPEC §2.3; docs/decisions.md, "Tenancy"): the scope types, the operator's
 * explicit `allMerchants`, and the ways to carry a scope one already holds into a transaction
 * (`transactionIn`, `within`). Nothing here makes a merchant's scope from a number or brands a raw
 * number as a scoped id: that is store/scope-mint.ts, importable only inside src/store/, so outside
 * the store a scope comes from the edge (store/edge-scopes.ts) or from a store lookup's `owner`.
 */
export {
  allMerchants,
  isMerchantScope,
  outsideTransaction,
  transactionIn,
  within,
  type AllMerchants,
  type MerchantOwnedTable,
  type MerchantScope,
  type Owned,
  type ScopedClaimId,
  type ScopedOrderId,
  type ScopedRefundId,
  type ScopedSplitId,
  type TenantScope,
} from './scope-mint.ts';
