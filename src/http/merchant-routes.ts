import type { Scope } from '../schemas/admin.ts';

/** The base path of the merchant API (SPEC §1); `/openapi/openapi` is rewritten onto it. */
export const MERCHANT_PREFIX = '/openapi';

export interface MerchantRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to MERCHANT_PREFIX, Fastify syntax (`:id`); parameter names do not matter. */
  path: string;
  scope: Scope;
  /** What a call of it does, in words (the business manager's Usage page names a route by it: "Read an order"). */
  what: string;
  /** `bulk`: the route takes large bodies (webhook SKU lists); `file`: a streamed upload (claim evidence); others take the merchant limit (src/http/limits.ts). */
  body?: 'bulk' | 'file';
}

/**
 * SPEC §3 (and §6.3, §13): every merchant route and the scope it needs. This table is the single
 * source: `requireMerchant` refuses to register a merchant route that is not listed here and sets
 * each route's scope from it, and the scope and tenancy tests iterate it. A new merchant route
 * therefore starts by adding its line here.
 */
export const MERCHANT_ROUTES: readonly MerchantRoute[] = [
  { method: 'POST', path: '/v1/order/orders', what: 'Create an order', scope: 'orders:write' },
  { method: 'POST', path: '/v2/order/orders', what: 'Create an order', scope: 'orders:write' },
  { method: 'GET', path: '/v2/order/orders', what: 'Search orders', scope: 'orders:read' },
  { method: 'GET', path: '/v2/order/orders/:id', what: 'Read an order', scope: 'orders:read' },
  { method: 'POST', path: '/v2/order/orders/:id/refund', what: 'Request a refund', scope: 'refunds:write' },
  { method: 'GET', path: '/v2/order/orders/refund/:id', what: "Read an order's refunds", scope: 'orders:read' },
  { method: 'POST', path: '/v2/order/orders/channel', what: 'Quote shipping channels', scope: 'orders:read' },
  { method: 'POST', path: '/v2/order/orders/automaticSplit/channel', what: 'Quote freight per split order', scope: 'orders:read' },
  { method: 'GET', path: '/v1/product/stocks', what: 'Check stock', scope: 'stock:read' },
  { method: 'GET', path: '/v1/product/stocks/changes', what: 'Read stock changes', scope: 'stock:read' },
  { method: 'GET', path: '/v1/product/category', what: 'Read the categories', scope: 'catalog:read' },
  { method: 'GET', path: '/v1/product/countryAndWarehouse', what: 'Read the warehouses', scope: 'catalog:read' },
  { method: 'GET', path: '/v1/product/products', what: 'Read the catalogue', scope: 'catalog:read' },
  { method: 'POST', path: '/v1/webhooks', what: 'Register a webhook endpoint', scope: 'orders:read', body: 'bulk' },
  { method: 'GET', path: '/v1/webhooks', what: 'List webhook endpoints', scope: 'orders:read' },
  { method: 'PUT', path: '/v1/webhooks/:id', what: 'Change a webhook endpoint', scope: 'orders:read', body: 'bulk' },
  { method: 'DELETE', path: '/v1/webhooks/:id', what: 'Delete a webhook endpoint', scope: 'orders:read' },
  { method: 'POST', path: '/v1/webhooks/:id/rotate-secret', what: 'Rotate a webhook signing secret', scope: 'orders:read' },
  { method: 'GET', path: '/v1/webhooks/:id/deliveries', what: 'Read a webhook delivery log', scope: 'orders:read' },
  { method: 'POST', path: '/v1/webhooks/:id/deliveries/:deliveryId/retry', what: 'Deliver a webhook event again', scope: 'orders:read' },
  { method: 'GET', path: '/v1/account', what: 'Read the account', scope: 'account:read' },
  { method: 'GET', path: '/v1/account/transactions', what: "Read the account's transactions", scope: 'account:read' },
  { method: 'POST', path: '/v1/claims', what: 'Open a claim', scope: 'claims:write' },
  { method: 'POST', path: '/v1/claims/files', what: 'Upload claim evidence', scope: 'claims:write', body: 'file' },
  { method: 'GET', path: '/v1/claims/files/:fileId', what: 'Download claim evidence', scope: 'claims:read' },
  { method: 'GET', path: '/v1/claims', what: 'List claims', scope: 'claims:read' },
  { method: 'GET', path: '/v1/claims/:claimNo', what: 'Read a claim', scope: 'claims:read' },
  { method: 'POST', path: '/v1/claims/:claimNo/cancel', what: 'Withdraw a claim', scope: 'claims:write' },
  { method: 'POST', path: '/v1/claims/:claimNo/return', what: "Send a return's tracking", scope: 'claims:write' },
];

/** `/v2/order/orders/:orderId` → `/v2/order/orders/:`: routes match whatever their parameters are called. */
export const routeShape = (path: string) => path.replace(/:[^/]+/g, ':').replace(/\/+$/, '') || '/';

const BY_SHAPE = new Map(MERCHANT_ROUTES.map((r) => [`${r.method} ${routeShape(r.path)}`, r]));

/**
 * The table entry for a registered route (`url` with or without the prefix). HEAD routes, which
 * Fastify adds for every GET, answer to the GET's entry.
 */
export function merchantRouteFor(method: string, url: string): MerchantRoute | undefined {
  const path = url.startsWith(`${MERCHANT_PREFIX}/`) ? url.slice(MERCHANT_PREFIX.length) : url;
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  return BY_SHAPE.get(`${m} ${routeShape(path)}`);
}

/** Merchant routes that take an id in the path: each must be in the tenancy test's table. */
export const idRoutes = () => MERCHANT_ROUTES.filter((r) => r.path.includes(':'));
