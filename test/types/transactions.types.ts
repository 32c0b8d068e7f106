/**
 * Issue 30, rule 1, checked by the compiler (`tsc --noEmit` in `npm test`): a function that locks
 * or writes takes a transaction (`Trx`), so a call on a bare handle does not compile. Each
 * `@ts-expect-error` below must stay an error: were the rule loosened, tsc would report the
 * directive as unused and the type check would fail.
 */
import type { Db, Trx } from '../../src/store/db.ts';
import { post, type Posting } from '../../src/store/ledger.repository.ts';
import { cancelSplitOrder, finishRefund, lockPendingRefund, lockSplitOrders, settlePending } from '../../src/store/refunds.repository.ts';
import { addQty, setQty } from '../../src/store/stocks.repository.ts';
import { forMerchant, type ScopedOrderId, type ScopedRefundId, type ScopedSplitId } from '../../src/store/tenancy.ts';
import { emitOrderCancelled } from '../../src/services/webhook-events.service.ts';

declare const db: Db;
declare const trx: Trx;
declare const posting: Posting;
// Resolved ids (test/types/tenancy.types.ts holds the calls with raw ones): only the handle is wrong below.
declare const orderId: ScopedOrderId;
declare const refundId: ScopedRefundId;
declare const splitId: ScopedSplitId;
const stockRow = { productId: 1, warehouseId: 1 };
const outcome = { status: 'refund_successfully', failureReason: null, amountCents: 0, decidedBy: 'auto' } as const;

export const onATransaction = () => [
  lockSplitOrders(trx, orderId),
  lockPendingRefund(trx, refundId, 0),
  settlePending(trx, 1, 1, true, 0),
  cancelSplitOrder(trx, splitId, 0),
  finishRefund(trx, refundId, outcome, 0),
  addQty(trx, stockRow, 1, { kind: 'return' }, 0),
  setQty(trx, stockRow, 1, 0),
  post(forMerchant(trx, 1), posting, 0),
  emitOrderCancelled(forMerchant(trx, 1), 1, 0),
];

export const onABareHandle = () => [
  // @ts-expect-error a row lock outside a transaction ends with its statement: it would lock nothing
  lockSplitOrders(db, orderId),
  // @ts-expect-error the same for a pending refund taken for deciding
  lockPendingRefund(db, refundId, 0),
  // @ts-expect-error a refund's quantities move with its decision, never alone
  settlePending(db, 1, 1, true, 0),
  // @ts-expect-error a split is cancelled with its refund or its credit, never alone
  cancelSplitOrder(db, splitId, 0),
  // @ts-expect-error a refund is decided (its state, amount, claim) in the transaction that moves its quantities
  finishRefund(db, refundId, outcome, 0),
  // @ts-expect-error a stock change and its ledger row are one transaction
  addQty(db, stockRow, 1, { kind: 'return' }, 0),
  // @ts-expect-error the same for an absolute quantity
  setQty(db, stockRow, 1, 0),
  // @ts-expect-error a posting (balance, entry, lines) commits with its cause: a scope over a bare handle is refused
  post(forMerchant(db, 1), posting, 0),
  // @ts-expect-error an outbox row commits with the change it announces
  emitOrderCancelled(forMerchant(db, 1), 1, 0),
];
