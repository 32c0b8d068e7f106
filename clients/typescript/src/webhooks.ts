/**
 * `verifyWebhook(headers, body, secret)`: the server signs with this very module (node:crypto
 * only), so the client and server can never disagree about the format. A copy of the client
 * taken out of this repository needs src/domain/webhook-signature.ts beside it.
 */
export { verifyWebhook, WebhookVerificationError } from '../../../src/domain/webhook-signature.ts';
