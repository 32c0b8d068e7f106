/**
 * The words of the contract (SPEC.md), defined once: storage columns (store/schema.ts), payload
 * schemas (schemas/), the CLI and the rules all take their lists and types from here.
 * Scopes live in scopes.ts and refund reasons in refunds.ts, beside the rules that use them.
 */

/** Where a server runs (STOCKIST_ENV); tokens carry it in their prefix. */
export const ENVIRONMENTS = ['sandbox', 'production'] as const;
export type StockistEnv = (typeof ENVIRONMENTS)[number];

export const MERCHANT_STATUSES = ['active', 'disabled'] as const;
export type MerchantStatus = (typeof MERCHANT_STATUSES)[number];

/**
 * `operator`: issued by the operator API/CLI; `oauth`: issued by the token endpoint; `personal`: a
 * personal access token a merchant user created in the business manager.
 */
export type TokenKind = 'operator' | 'oauth' | 'personal';

export const ORDER_STATUSES = ['processing', 'completed', 'cancel'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const FULFILLMENT_STATUSES = ['waiting_to_ship', 'partially_shipped', 'fully_shipped', 'completed'] as const;
export type FulfillmentStatus = (typeof FULFILLMENT_STATUSES)[number];

export const SPLIT_ORDER_STATUSES = ['waiting_to_ship', 'shipped', 'completed', 'cancelled'] as const;
export type SplitOrderStatus = (typeof SPLIT_ORDER_STATUSES)[number];

/** An order's (and an item's) refund status; null while nothing was refunded. */
export type RefundStatus = 'refunding' | 'partial_refund' | 'refunded';

/** A refund request's state. */
export const REFUND_STATES = ['pending_review', 'refund_successfully', 'refund_failed'] as const;
export type RefundState = (typeof REFUND_STATES)[number];

/** Why a stock level changed (the stock ledger and feed). */
export const LEDGER_KINDS = ['sale', 'return', 'restock', 'adjustment'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** SPEC §13: the events a merchant can subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'refund.succeeded',
  'refund.failed',
  'split_order.shipped',
  'split_order.delivered',
  'order.cancelled',
  'stock.changed',
  'balance.low',
  'claim.approved',
  'claim.rejected',
  'claim.credited',
  'claim.reshipped',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * The business manager's "send a test event": delivered (signed, logged, retried) like any event,
 * to one endpoint, but nobody subscribes to it, so it is not in WEBHOOK_EVENT_TYPES.
 */
export const WEBHOOK_TEST_EVENT = 'webhook.test';
export type StoredWebhookEventType = WebhookEventType | typeof WEBHOOK_TEST_EVENT;

export const WEBHOOK_ENDPOINT_STATUSES = ['active', 'disabled'] as const;
export type WebhookEndpointStatus = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];
