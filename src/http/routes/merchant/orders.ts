import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendStored } from '../../envelope.ts';
import type { Config } from '../../../config.ts';
import { MerchantResponses } from '../../../schemas/common.ts';
import {
  ChannelQuoteList,
  ChannelTypeQuoteList,
  CreateOrderBody,
  IdempotencyHeaders,
  OrderId,
  OrderIdParams,
  OrderPage,
  OrderQuery,
  OrderRecord,
  QuoteBody,
} from '../../../schemas/orders.ts';
import { getOrder, queryOrders } from '../../../services/order-query.service.ts';
import { placeOrder } from '../../../services/orders.service.ts';
import { quoteChannelTypes, quoteChannels } from '../../../services/quotes.service.ts';
import type { Store } from '../../../store/db.ts';

const ORDERS = ['Orders'];

/** SPEC §4: create (v1 and the v2 alias), quotes, query. */
export const orderRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config }> = async (app, { store, config }) => {
  const deps = { store, config };

  for (const [url, operationId] of [
    ['/v1/order/orders', 'createOrder'],
    ['/v2/order/orders', 'createOrderV2'],
  ] as const) {
    const schema = {
      operationId,
      summary: operationId === 'createOrder' ? 'Create an order' : 'Create an order (v2 alias of POST /v1/order/orders)',
      description:
        'Allocates every line to warehouses and splits the order by warehouse in one transaction; `data` is the parent order id (kkOrderId). ' +
        'Re-sending the same request with the same `customOrderId` or `Idempotency-Key` replays the first answer (`Idempotent-Replayed: true`).',
      tags: ORDERS,
      body: CreateOrderBody,
      headers: IdempotencyHeaders,
      // The handler sends a pre-built (replayable) envelope, so this describes the envelope.
      response: MerchantResponses(OrderId),
    };
    app.post(url, { schema, config: { scope: 'orders:write', envelope: false } }, async (request, reply) => {
      const result = await placeOrder(deps, request.merchant!, request.body, request.headers['idempotency-key'] ?? null, request.id);
      return sendStored(reply, result);
    });
  }

  const channelSchema = {
    operationId: 'quoteChannels',
    summary: 'Logistics channels and freight per warehouse group',
    description: 'Dry-runs the allocation (nothing is reserved) and lists every serving channel per warehouse group, by delivery time then price.',
    tags: ORDERS,
    body: QuoteBody,
    response: MerchantResponses(ChannelQuoteList),
  };
  app.post('/v2/order/orders/channel', { schema: channelSchema, config: { scope: 'orders:read' } }, async (request) => quoteChannels(deps, request.body));

  const typeSchema = {
    operationId: 'quoteChannelTypes',
    summary: 'Freight per channel type for the whole split order',
    description: 'One entry per channel type available to every warehouse group: freight summed over the groups, delivery time of the slowest.',
    tags: ORDERS,
    body: QuoteBody,
    response: MerchantResponses(ChannelTypeQuoteList),
  };
  app.post('/v2/order/orders/automaticSplit/channel', { schema: typeSchema, config: { scope: 'orders:read' } }, async (request) =>
    quoteChannelTypes(deps, request.body),
  );

  const querySchema = {
    operationId: 'queryOrders',
    summary: 'Query orders',
    description:
      'Newest first; with an update window, ascending `updateDate` then id so that a client can sync incrementally. ' +
      'Page by `pageNumber`, or walk by `cursor`: every page carries `nextCursor` (null after the last row); pass it as `cursor` for the next page. ' +
      'A cursor walk never skips an order that existed when it began, even while orders are created or change (a changed order may appear again, newer); ' +
      'a page-number walk can repeat rows (newest first, while orders are created) or skip them (update window, while orders change). ' +
      'A window end (`createEndTime`, `updateEndTime`) covers its whole second. `total` is counted up to 10,000.',
    tags: ORDERS,
    querystring: OrderQuery,
    response: MerchantResponses(OrderPage),
  };
  app.get('/v2/order/orders', { schema: querySchema, config: { scope: 'orders:read' } }, async (request) => queryOrders(request.merchant!, request.query));

  const getSchema = {
    operationId: 'getOrder',
    summary: 'One order, by parent or split order id',
    tags: ORDERS,
    params: OrderIdParams,
    response: MerchantResponses(OrderRecord),
  };
  app.get('/v2/order/orders/:id', { schema: getSchema, config: { scope: 'orders:read' } }, async (request) => getOrder(request.merchant!, request.params.id));
};
