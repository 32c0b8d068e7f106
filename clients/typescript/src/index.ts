// The Stockist Open API client. Import by path from the repository:
//   import { StockistClient } from '../clients/typescript/src/index.ts';
export { StockistClient, OPERATION_METHODS } from './client.ts';
export type { StockistClientOptions, PostOptions, Schemas, ResponseData, QueryOf, BodyOf, TokenResponse } from './client.ts';
export { StockistError, parseRetryAfter } from './errors.ts';
export type { FieldError } from './errors.ts';
export type { components, operations, paths } from './schema.d.ts';

// Webhooks (SPEC §13): check a delivery's Standard Webhooks signature before trusting its body.
export { verifyWebhook, WebhookVerificationError } from './webhooks.ts';
export type { WebhookEvent, StockChangedEvent, StockChangedEntry, RefundEvent, SplitOrderEvent, OrderCancelledEvent, BalanceLowEvent } from './webhooks.ts';
