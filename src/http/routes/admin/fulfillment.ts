import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from 'typebox';
import { AdminResponses, OperatorRefundPage } from '../../../schemas/admin-responses.ts';
import type { Config } from '../../../config.ts';
import { adminKeyActor } from '../../../domain/audit.ts';
import { AdminRefundQuery, CancelSplitBody, DecisionBody, RefundNoParams, RefundRecord, ShipBody } from '../../../schemas/refunds.ts';
import { OrderRecord } from '../../../schemas/orders.ts';
import { IdParams } from '../../../schemas/admin.ts';
import { cancelUnshippedSplit, deliverSplitOrder, shipSplitOrder } from '../../../services/fulfillment.service.ts';
import { getOrder } from '../../../services/order-query.service.ts';
import { listRefundsForOperator, reviewRefund } from '../../../services/refunds.service.ts';
import type { Store } from '../../../store/db.ts';
import { allMerchants } from '../../../store/tenancy.ts';

/** Operator fulfilment and refund review (SPEC §5.3–5.4, §7). */
export const adminFulfillmentRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config; adminApiKey: string }> = async (
  app,
  { store, config, adminApiKey },
) => {
  const { db } = store;
  const actor = (request: { id: string }) => adminKeyActor(adminApiKey, request.id);
  const doc = (summary: string, data: TSchema, tag = 'Refunds') => ({ summary, tags: [tag], response: AdminResponses(data) });
  app.post(
    '/split-orders/:id/ship',
    { schema: { ...doc('Ship a split order (carrier and tracking code)', OrderRecord, 'Orders'), params: IdParams, body: ShipBody } },
    async (request) => getOrder(allMerchants(db), await shipSplitOrder(db, actor(request), request.params.id, request.body)),
  );
  app.post(
    '/split-orders/:id/deliver',
    { schema: { ...doc('Mark a shipped split order delivered', OrderRecord, 'Orders'), params: IdParams } },
    async (request) => getOrder(allMerchants(db), await deliverSplitOrder(db, actor(request), request.params.id)),
  );
  app.post(
    '/split-orders/:id/cancel',
    {
      schema: {
        ...doc(
          'Cancel a split order that has not shipped: its units back in stock, their amount and the freight credited to the merchant (cancellation_credit)',
          OrderRecord,
          'Orders',
        ),
        params: IdParams,
        body: CancelSplitBody,
      },
    },
    async (request) => getOrder(allMerchants(db), await cancelUnshippedSplit(db, actor(request), request.params.id, request.body.reason)),
  );

  app.get(
    '/refunds',
    { schema: { ...doc('Refunds, oldest pending first, with age and SLA flag', OperatorRefundPage), querystring: AdminRefundQuery } },
    async (request) =>
      listRefundsForOperator(
        db,
        config,
        request.query.status ?? null,
        request.query.pageNumber ?? 1,
        request.query.pageSize ?? 50,
        Date.now(),
        request.query.manualReview ?? null,
      ),
  );
  app.post(
    '/refunds/:refundNo/approve',
    { schema: { ...doc('Approve a pending refund', RefundRecord), params: RefundNoParams, body: DecisionBody } },
    async (request) => reviewRefund(db, actor(request), request.params.refundNo, { approve: true }),
  );
  app.post(
    '/refunds/:refundNo/reject',
    { schema: { ...doc('Reject a pending refund (reason shown to the merchant)', RefundRecord), params: RefundNoParams, body: DecisionBody } },
    async (request) =>
      reviewRefund(db, actor(request), request.params.refundNo, { approve: false, reason: request.body?.reason || 'rejected by the operator' }),
  );
};
