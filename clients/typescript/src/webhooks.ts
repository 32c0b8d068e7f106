/**
 * `verifyWebhook(headers, body, secret)`: the server signs with this very module (node:crypto
 * only), so the client and server can never disagree about the format. A copy of the client
 * taken out of this repository needs src/domain/webhook-signature.ts beside it.
 */
export { verifyWebhook, WebhookVerificationError } from '../../../src/domain/webhook-signature.ts';

import type { components } from './schema.d.ts';

type S = components['schemas'];
/** The body of a `stock.changed` delivery: `data.changes` (each SKU and warehouse once, latest `qty`) and `data.cursor`. */
export type StockChangedEvent = S['StockChangedEvent'];
export type StockChangedEntry = S['StockChangedEntry'];
export type RefundEvent = S['RefundEvent'];
export type SplitOrderEvent = S['SplitOrderEvent'];
export type OrderCancelledEvent = S['OrderCancelledEvent'];
export type BalanceLowEvent = S['BalanceLowEvent'];
/** Any delivery's body; narrow it on `type`. */
export type WebhookEvent = StockChangedEvent | RefundEvent | SplitOrderEvent | OrderCancelledEvent | BalanceLowEvent;
