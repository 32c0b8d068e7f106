/**
 * Issue 30, rule 1, tenancy, checked by the compiler (`tsc --noEmit` in `npm test`): services take
 * a merchant's scope, never its number; ids are parsed where a request comes in, so services take
 * numbers, never the text; and an order's child rows, a refund's and a split order's rows are read,
 * locked and written only by an id resolved in a scope (`ScopedOrderId`, `ScopedRefundId`, `ScopedSplitId`).
 * Each `@ts-expect-error` below must stay an error: were a signature loosened, tsc would report
 * the directive as unused and the type check would fail.
 */
import type { Actor } from '../../src/domain/audit.ts';
import { listCredentials, revokeClient } from '../../src/services/credentials.service.ts';
import { inviteUser } from '../../src/services/merchant-invitations.service.ts';
import { team } from '../../src/services/merchant-team.service.ts';
import { getOrder } from '../../src/services/order-query.service.ts';
import { decideRefund, refundsOfOrder as refundPage } from '../../src/services/refunds.service.ts';
import { deleteWebhook, listDeliveries } from '../../src/services/webhooks.service.ts';
import type { Db, Trx } from '../../src/store/db.ts';
import { loadOrders, resolveOrderId } from '../../src/store/orders.repository.ts';
import {
  cancelSplitOrder,
  lockPendingRefund,
  lockSplitOrders,
  refundById,
  refundItems,
  refundsOfOrder,
  resolveRefund,
} from '../../src/store/refunds.repository.ts';
import { hasPendingRefund, itemsLeft, markShipped, resolveSplitOrder } from '../../src/store/split-orders.repository.ts';
import { claimableItems, claimLines, lockClaim, moveClaim } from '../../src/store/claims.repository.ts';
import { allMerchants, type ScopedOrderId, type ScopedRefundId } from '../../src/store/tenancy.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';

declare const db: Db;
declare const trx: Trx;
declare const actor: Actor;
declare const resolved: ScopedOrderId;
declare const scopedRefund: ScopedRefundId;
const merchant = forMerchant(db, 1);
const page = { pageNumber: 1, pageSize: 10 };

export const withAScope = () => [
  listCredentials(merchant, 'sandbox'),
  team(merchant, 0),
  inviteUser(merchant, actor, { email: 'a@example.com', role: 'admin' }, 0),
  revokeClient(merchant, actor, 7, 0),
  deleteWebhook(merchant, 3),
  listDeliveries(merchant, 3, page),
  getOrder(merchant, 12),
  refundPage(merchant, 12, page),
];

export const withABareMerchantNumber = () => [
  // @ts-expect-error a service takes the merchant's scope, made at the edge, never its number
  listCredentials(1, 'sandbox'),
  // @ts-expect-error the same for a read of the team
  team(1, 0),
  // @ts-expect-error nor the bare database handle, which reaches every merchant's rows
  inviteUser(db, actor, { email: 'a@example.com', role: 'admin' }, 0),
];

export const withARawStringId = () => [
  // @ts-expect-error ids are parsed at the edge (lookupId, TypeBox params): a service takes the number
  getOrder(merchant, '12'),
  // @ts-expect-error the same for a webhook endpoint
  deleteWebhook(merchant, '3'),
  // @ts-expect-error and for an OAuth client
  revokeClient(merchant, actor, '7', 0),
];

export const childRows = async () => {
  const orderId = await resolveOrderId(merchant, 12);
  if (orderId === null) return [];
  return [loadOrders(merchant, [orderId]), loadOrders(allMerchants(db), [resolved]), refundsOfOrder(merchant, orderId, 0, 10)];
};

export const unscopedChildRows = () => [
  // @ts-expect-error an order's lines and splits are read only by an id resolved in a scope, not by a raw id
  loadOrders(merchant, [12]),
  // @ts-expect-error the same for the operator: the search or lookup resolves the id first
  loadOrders(allMerchants(db), [12]),
  // @ts-expect-error an order's refunds likewise
  refundsOfOrder(merchant, 12, 0, 10),
  // @ts-expect-error a bare handle is no reader at all
  loadOrders(db, [resolved]),
];

/** Resolved refund and split-order ids: the operator (no merchant scope) says so with `allMerchants`, as for orders. */
export const refundAndSplitRows = async () => {
  const refund = await resolveRefund(allMerchants(db), 12);
  const split = await resolveSplitOrder(allMerchants(db), 3);
  const own = await resolveRefund(merchant, 12);
  if (!refund || !split || !own) return [];
  return [
    lockPendingRefund(trx, refund.id, 0),
    refundItems(db, [refund.id, own.id]),
    refundById(db, refund.id),
    decideRefund(db, refund.id, { approve: true }, 'operator'),
    lockSplitOrders(trx, refund.order_id),
    lockSplitOrders(trx, split.order_id),
    hasPendingRefund(trx, split.id),
    itemsLeft(db, split.id),
    markShipped(trx, split.id, { carrier: 'UPS', trackingCode: '1Z' }, 0),
    cancelSplitOrder(trx, split.id, 0),
  ];
};

export const unscopedRefundAndSplitRows = () => [
  // @ts-expect-error a refund number from a request is locked for deciding only once resolved (resolveRefund, the worker's claim)
  lockPendingRefund(trx, 12, 0),
  // @ts-expect-error nor decided by a raw number
  decideRefund(db, 12, { approve: true }, 'operator'),
  // @ts-expect-error a refund's items are read only by a resolved refund id
  refundItems(db, [12]),
  // @ts-expect-error nor the refund itself
  refundById(db, 12),
  // @ts-expect-error a split order's rows are locked only by a resolved order id
  lockSplitOrders(trx, 12),
  // @ts-expect-error a split order is cancelled only by a resolved split-order id (resolveSplitOrder)
  cancelSplitOrder(trx, 3, 0),
  // @ts-expect-error the same for the pending-refund check before shipping or cancelling
  hasPendingRefund(trx, 3),
  // @ts-expect-error and for the items a cancellation gives back
  itemsLeft(db, 3),
  // @ts-expect-error and for shipping it
  markShipped(trx, 3, { carrier: 'UPS', trackingCode: '1Z' }, 0),
  // @ts-expect-error the brands do not mix: an order id is no refund id
  lockPendingRefund(trx, resolved, 0),
  // @ts-expect-error nor a refund id a split order's
  cancelSplitOrder(trx, scopedRefund, 0),
  // @ts-expect-error a claim is locked for a decision only once resolved (resolveClaim, in a scope)
  lockClaim(trx, 'sqlite', 12),
  // @ts-expect-error nor moved by a raw claim number
  moveClaim(trx, 12, ['open'], { status: 'approved', updated_at: 0 }),
  // @ts-expect-error nor its lines read
  claimLines(allMerchants(db), [12]),
  // @ts-expect-error a split order's claimable lines are read only by a resolved split-order id
  claimableItems(db, 3),
  // @ts-expect-error an order id is no claim id
  lockClaim(trx, 'sqlite', resolved),
];

/**
 * A scope's handle is closed to code outside store/ (issue 30, rule 1: no escape hatch): the scope
 * has no `handle` to read, and the symbol key it keeps the handle under is exported only by
 * store/scope-handle.ts, which dependency-cruiser forbids outside store/ (test files, like this one,
 * may import it; test/store/tenancy.test.ts does).
 */
export const handleIsClosed = () => [
  // @ts-expect-error a merchant's scope does not hand out its handle
  merchant.handle,
  // @ts-expect-error nor does a scope inside a transaction
  forMerchant(trx, 1).handle,
  // @ts-expect-error nor by destructuring
  (({ handle }: typeof merchant) => handle)(merchant),
  // @ts-expect-error nor the operator's view of every merchant
  allMerchants(db).handle,
];

/**
 * Structure II, item 1: only the store mints tenancy. Outside src/store/ a merchant's scope comes
 * from the edge's one function each (store/edge-scopes.ts, which dependency-cruiser's
 * `edge-scopes-only-at-the-edge` keeps to http/auth.ts, the manager's plugin, the operator's routes
 * and pages, the CLI and the demo seed) or from a store lookup's `owner`; store/scope-mint.ts, the
 * one constructor, is refused outside store/ by `tenancy-minted-in-store`. tenancy.ts, which any
 * layer may import, has no constructor to offer, and a scope cannot be written as a literal.
 */
// @ts-expect-error tenancy.ts no longer hands out the constructor of a merchant's scope
import { forMerchant as forgeScope } from '../../src/store/tenancy.ts';
// @ts-expect-error nor the brand of a resolved order id
import { resolvedOrderId as forgeOrderId } from '../../src/store/tenancy.ts';
// @ts-expect-error nor the brands of refund, split-order and claim ids, nor the lookups' `ownedBy`
import { ownedBy, resolvedClaimId, resolvedRefundId, resolvedSplitId } from '../../src/store/tenancy.ts';
import type { MerchantScope } from '../../src/store/tenancy.ts';

export const forgedScopes = () => [
  forgeScope,
  forgeOrderId,
  ownedBy,
  resolvedClaimId,
  resolvedRefundId,
  resolvedSplitId,
  // @ts-expect-error a scope written as a literal lacks the handle key only store/ can name
  ((): MerchantScope => ({
    merchantId: 2,
    selectFrom: merchant.selectFrom,
    updateTable: merchant.updateTable,
    deleteFrom: merchant.deleteFrom,
    insertInto: merchant.insertInto,
  }))(),
  // @ts-expect-error a raw number is no resolved order id: only a store lookup brands one
  loadOrders(merchant, [7 as number]),
];

/** What a lookup hands back: the id it resolved and the row's merchant's scope, for the service to act in (`within(owner, trx)`). */
export const ownedRows = async () => {
  const split = await resolveSplitOrder(allMerchants(db), 3);
  if (!split) return [];
  const owner: MerchantScope = split.owner;
  return [owner, markShipped(trx, split.id, { carrier: 'UPS', trackingCode: '1Z' }, 0)];
};
