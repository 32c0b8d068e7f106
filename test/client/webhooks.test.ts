import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError } from '../../clients/typescript/src/index.ts';

/** The typed client's `verifyWebhook` accepts what a Standard Webhooks signer produces, and nothing else. */
describe('client verifyWebhook', () => {
  const secret = `whsec_${Buffer.from('a'.repeat(32)).toString('base64')}`;
  const body = JSON.stringify({ type: 'refund.succeeded', timestamp: '2026-11-22T06:00:00Z', data: { refundNo: '8000000000001' } });
  const id = 'msg_4000000000001';
  const timestamp = new Date();
  const signature = new Webhook(secret).sign(id, timestamp, body);
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': signature };

  it('verifies a signature made by the standardwebhooks library', () => {
    assert.deepEqual(verifyWebhook(headers, body, secret), JSON.parse(body));
  });
  it('refuses a tampered body or a wrong secret', () => {
    assert.throws(() => verifyWebhook(headers, body.replace('8000000000001', '8000000000002'), secret), WebhookVerificationError);
    assert.throws(() => verifyWebhook(headers, body, `whsec_${Buffer.from('b'.repeat(32)).toString('base64')}`), WebhookVerificationError);
  });
});
