import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendStored } from '../../envelope.ts';
import { MerchantResponses } from '../../../schemas/common.ts';
import { IdempotencyHeaders, OrderIdParams } from '../../../schemas/orders.ts';
import { RefundBody, RefundNo, RefundPage, RefundPageQuery } from '../../../schemas/refunds.ts';
import { refundsOfOrder, requestRefund } from '../../../services/refunds.service.ts';
import type { Store } from '../../../store/db.ts';

const REFUNDS = ['Refunds'];

/** SPEC §5: request a refund; read an order's refunds. */
export const refundRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  const requestSchema = {
    operationId: 'requestRefund',
    summary: 'Request a refund',
    description:
      '`{id}` is the kkOrderId. Name the lines in `orderItems`, or one line flat at the top level by `itemId` or `skuCode`. A body with ' +
      'no item field at all (none of `orderItems`, `itemId`, `skuCode`, `quantity`, `countryCode`) refunds the whole order; item fields ' +
      'that name no line, or an `orderItems` that is not a list, are refused (400). The refund starts in `pending_review` and is decided ' +
      'asynchronously; poll `GET /v2/order/orders/refund/{id}`. `data` is the refund number.',
    tags: REFUNDS,
    params: OrderIdParams,
    body: RefundBody,
    headers: IdempotencyHeaders,
    // The handler sends a pre-built (replayable) envelope, so this describes the envelope.
    response: MerchantResponses(RefundNo),
  };
  app.post('/v2/order/orders/:id/refund', { schema: requestSchema, config: { scope: 'refunds:write', envelope: false } }, async (request, reply) => {
    const result = await requestRefund(
      { store },
      request.merchant!,
      request.params.id,
      request.body ?? {},
      request.headers['idempotency-key'] ?? null,
      request.id,
    );
    return sendStored(reply, result);
  });

  const listSchema = {
    operationId: 'listRefunds',
    summary: "An order's refunds",
    description: '`{id}` is the order id; newest first.',
    tags: REFUNDS,
    params: OrderIdParams,
    querystring: RefundPageQuery,
    response: MerchantResponses(RefundPage),
  };
  app.get('/v2/order/orders/refund/:id', { schema: listSchema, config: { scope: 'orders:read' } }, async (request) =>
    refundsOfOrder(request.merchant!, request.params.id, request.query),
  );
};
