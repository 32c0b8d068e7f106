/**
 * Issue 30, rule 1, checked by the compiler (`tsc --noEmit` in `npm test`): a function that locks
 * or writes takes a transaction (`Trx`), so a call on a bare handle does not compile. Each
 * `@ts-expect-error` below must stay an error: were the rule loosened, tsc would report the
 * directive as unused and the type check would fail. test/unit/writes-take-trx.test.ts checks
 * that every exported store function that writes or locks is typed so.
 */
import type { Db, Trx } from '../../src/store/db.ts';
import { post, type Posting } from '../../src/store/ledger.repository.ts';
import {
  cancelSplitOrder,
  claimDueRefunds,
  finishRefund,
  lockPendingRefund,
  lockSplitOrders,
  settlePending,
  writeRefundRequest,
  type RefundRequestWrites,
} from '../../src/store/refunds.repository.ts';
import { addQty, setQty } from '../../src/store/stocks.repository.ts';
import { outsideTransaction, type ScopedOrderId, type ScopedRefundId, type ScopedSplitId } from '../../src/store/tenancy.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';
import { emitOrderCancelled } from '../../src/services/webhook-events.service.ts';
import { noteTokensUsed } from '../../src/store/credentials.repository.ts';
import { purgeExpiredKeys } from '../../src/store/idempotency.repository.ts';
import { setMerchantStatus } from '../../src/store/merchants.repository.ts';
import { claimRefreshToken, revokeFamily } from '../../src/store/oauth.repository.ts';
import { updateOrderStatus } from '../../src/store/orders.repository.ts';
import * as staff from '../../src/store/staff.repository.ts';
import * as accounts from '../../src/store/accounts.repository.ts';
import { takeFlash } from '../../src/store/web-forms.repository.ts';
import { claimDueDeliveries, insertEndpoint } from '../../src/store/webhooks.repository.ts';
import { upsertWarehouse } from '../../src/store/warehouses.repository.ts';
import { attachFiles, deleteOrphanFiles, lockClaim, moveClaim } from '../../src/store/claims.repository.ts';
import type { ScopedClaimId } from '../../src/store/tenancy.ts';

declare const db: Db;
declare const trx: Trx;
declare const posting: Posting;
declare const requestWrites: RefundRequestWrites;
// Resolved ids (test/types/tenancy.types.ts holds the calls with raw ones): only the handle is wrong below.
declare const orderId: ScopedOrderId;
declare const refundId: ScopedRefundId;
declare const claimId: ScopedClaimId;
declare const splitId: ScopedSplitId;
const stockRow = { productId: 1, warehouseId: 1 };
const session = {} as accounts.NewSession<typeof accounts.MERCHANT_USER_ACCOUNTS>;
const times = { created_at: 0, last_seen_at: 0, idle_expires_at: 0, expires_at: 0 };
const change = {} as Parameters<typeof updateOrderStatus>[2];
const warehouse = { code: 'W', name: 'W', countryCode: 'DE', countryName: 'Germany', status: 1 };
const endpoint = {} as Parameters<typeof insertEndpoint>[1];
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
  accounts.insertSession(trx, accounts.MERCHANT_USER_ACCOUNTS, session, times),
  // @ts-expect-error a row is typed by its kind: a business manager session (user_id, stage) is no console session (staff_id)
  accounts.insertSession(trx, accounts.STAFF_ACCOUNTS, session, times),
  accounts.touchSession(trx, accounts.MERCHANT_USER_ACCOUNTS, 'h', 0, 0),
  accounts.touchSession(trx, accounts.STAFF_ACCOUNTS, 'h', 0, 0),
  staff.lockActiveOwners(trx),
  noteTokensUsed(trx, [1], 0),
  claimRefreshToken(trx, 1, 0),
  revokeFamily(trx, 'fam', 0),
  setMerchantStatus(trx, 1, 'disabled', 0),
  updateOrderStatus(trx, 1, change, 0),
  claimDueRefunds(trx, 'postgres', 'w', 0, 0, 0, 1),
  claimDueDeliveries(trx, 'postgres', 'w', 0, 0, 1),
  insertEndpoint(forMerchant(trx, 1), endpoint),
  upsertWarehouse(trx, warehouse, 0),
  purgeExpiredKeys(trx, 0, 1),
  takeFlash(trx, 'h', 'notice', 0, 1),
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
  // @ts-expect-error a business manager session is written in a transaction, like every write
  accounts.insertSession(db, accounts.MERCHANT_USER_ACCOUNTS, session, times),
  // @ts-expect-error a session's touch (at most once a minute) too
  accounts.touchSession(db, accounts.MERCHANT_USER_ACCOUNTS, 'h', 0, 0),
  // @ts-expect-error the same for a console session
  accounts.touchSession(db, accounts.STAFF_ACCOUNTS, 'h', 0, 0),
  // @ts-expect-error the owners' row locks must outlive the statement, until the change commits
  staff.lockActiveOwners(db),
  // @ts-expect-error a token's last use is a write
  noteTokensUsed(db, [1], 0),
  // @ts-expect-error a refresh token is claimed in the transaction that issues the new pair
  claimRefreshToken(db, 1, 0),
  // @ts-expect-error a family's refresh and access tokens are revoked together
  revokeFamily(db, 'fam', 0),
  // @ts-expect-error a merchant's status commits with its audit row
  setMerchantStatus(db, 1, 'disabled', 0),
  // @ts-expect-error an order's derived statuses are written with the change they follow
  updateOrderStatus(db, 1, change, 0),
  // @ts-expect-error the refund worker's claim (FOR UPDATE SKIP LOCKED on PostgreSQL)
  claimDueRefunds(db, 'postgres', 'w', 0, 0, 0, 1),
  // @ts-expect-error the webhook worker's claim
  claimDueDeliveries(db, 'postgres', 'w', 0, 0, 1),
  // @ts-expect-error a scoped write wants the scope over a transaction (transactionIn)
  insertEndpoint(forMerchant(db, 1), endpoint),
  // @ts-expect-error a catalogue upsert commits with its audit row
  upsertWarehouse(db, warehouse, 0),
  // @ts-expect-error a purge batch is a write
  purgeExpiredKeys(db, 0, 1),
  // @ts-expect-error reading a one-time display deletes it
  takeFlash(db, 'h', 'notice', 0, 1),
  // @ts-expect-error a claim is locked for a decision inside the decision's transaction
  lockClaim(db, 'postgres', claimId),
  // @ts-expect-error and moved there, with the decision's effects
  moveClaim(db, claimId, ['open'], { status: 'approved', updated_at: 0 }),
  // @ts-expect-error evidence is attached in the opening's transaction
  attachFiles(forMerchant(db, 1), claimId, [1]),
  // @ts-expect-error an orphan purge batch is a write
  deleteOrphanFiles(db, [1]),
  // @ts-expect-error a refund request's write runs in a transaction, or says it is one checked statement (`outsideTransaction`)
  writeRefundRequest(forMerchant(db, 1), 'postgres', requestWrites, 0),
];

/** A write that is one statement, atomic on its own, may run outside a transaction — said out loud. */
export const asOneStatement = () => [
  writeRefundRequest(outsideTransaction(forMerchant(db, 1), db), 'postgres', requestWrites, 0),
  writeRefundRequest(forMerchant(trx, 1), 'sqlite', requestWrites, 0),
];
