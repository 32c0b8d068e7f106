import type { Scope } from '../schemas/admin.ts';

/** The base path of the merchant API (SPEC §1); `/openapi/openapi` is rewritten onto it. */
export const MERCHANT_PREFIX = '/openapi';

export interface MerchantRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to MERCHANT_PREFIX, Fastify syntax (`:id`); parameter names do not matter. */
  path: string;
  scope: Scope;
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
  { method: 'POST', path: '/v1/order/orders', scope: 'orders:write' },
  { method: 'POST', path: '/v2/order/orders', scope: 'orders:write' },
  { method: 'GET', path: '/v2/order/orders', scope: 'orders:read' },
  { method: 'GET', path: '/v2/order/orders/:id', scope: 'orders:read' },
  { method: 'POST', path: '/v2/order/orders/:id/refund', scope: 'refunds:write' },
  { method: 'GET', path: '/v2/order/orders/refund/:id', scope: 'orders:read' },
  { method: 'POST', path: '/v2/order/orders/channel', scope: 'orders:read' },
  { method: 'POST', path: '/v2/order/orders/automaticSplit/channel', scope: 'orders:read' },
  { method: 'GET', path: '/v1/product/stocks', scope: 'stock:read' },
  { method: 'GET', path: '/v1/product/stocks/changes', scope: 'stock:read' },
  { method: 'GET', path: '/v1/product/category', scope: 'catalog:read' },
  { method: 'GET', path: '/v1/product/countryAndWarehouse', scope: 'catalog:read' },
  { method: 'GET', path: '/v1/product/products', scope: 'catalog:read' },
  { method: 'POST', path: '/v1/webhooks', scope: 'orders:read', body: 'bulk' },
  { method: 'GET', path: '/v1/webhooks', scope: 'orders:read' },
  { method: 'PUT', path: '/v1/webhooks/:id', scope: 'orders:read', body: 'bulk' },
  { method: 'DELETE', path: '/v1/webhooks/:id', scope: 'orders:read' },
  { method: 'POST', path: '/v1/webhooks/:id/rotate-secret', scope: 'orders:read' },
  { method: 'GET', path: '/v1/webhooks/:id/deliveries', scope: 'orders:read' },
  { method: 'POST', path: '/v1/webhooks/:id/deliveries/:deliveryId/retry', scope: 'orders:read' },
  { method: 'GET', path: '/v1/account', scope: 'account:read' },
  { method: 'GET', path: '/v1/account/transactions', scope: 'account:read' },
  { method: 'POST', path: '/v1/claims', scope: 'claims:write' },
  { method: 'POST', path: '/v1/claims/files', scope: 'claims:write', body: 'file' },
  { method: 'GET', path: '/v1/claims/files/:fileId', scope: 'claims:read' },
  { method: 'GET', path: '/v1/claims', scope: 'claims:read' },
  { method: 'GET', path: '/v1/claims/:claimNo', scope: 'claims:read' },
  { method: 'POST', path: '/v1/claims/:claimNo/cancel', scope: 'claims:write' },
  { method: 'POST', path: '/v1/claims/:claimNo/return', scope: 'claims:write' },
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
