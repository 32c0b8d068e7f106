import { notFound } from '../domain/errors.ts';
import { parseId } from '../domain/ids.ts';
import type { WebhookDeliveryStatus } from '../domain/vocabulary.ts';
import { presentDelivery, presentEndpoint } from '../present/webhook.presenter.ts';
import type { Handle } from '../store/db.ts';
import { forMerchant } from '../store/tenancy.ts';
import * as webhooks from '../store/webhooks.repository.ts';
import type { KeyStore } from './idempotency.service.ts';
import { retryDelivery } from './webhooks.service.ts';

async function anyEndpoint(db: Handle, rawId: string) {
  const endpoint = await webhooks.findAnyEndpoint(db, parseId(rawId) ?? 0);
  if (!endpoint) throw notFound('webhook');
  return endpoint;
}

/** An endpoint (any merchant's) with one page of its delivery log, newest first. */
export async function endpointLogForOperator(db: Handle, rawId: string, status: WebhookDeliveryStatus | null, pageNumber: number, pageSize: number) {
  const endpoint = await anyEndpoint(db, rawId);
  const page = await webhooks.pageDeliveries(forMerchant(db, endpoint.merchant_id), endpoint.id, status, (pageNumber - 1) * pageSize, pageSize);
  return {
    endpoint: { ...presentEndpoint(endpoint), merchantId: String(endpoint.merchant_id) },
    total: page.total,
    pageNumber,
    pageSize,
    deliveries: page.rows.map(presentDelivery),
  };
}

/** The operator's retry of a delivery: the merchant's own retry (due now, a fresh 24 h window), on the operator's behalf. */
export async function retryDeliveryForOperator(keyStore: KeyStore, rawId: string, rawDeliveryId: string, requestId: string, now: number) {
  const endpoint = await anyEndpoint(keyStore.db, rawId);
  return retryDelivery(keyStore, endpoint.merchant_id, rawId, rawDeliveryId, null, requestId, now);
}
