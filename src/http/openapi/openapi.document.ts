import type { RouteOptions } from 'fastify';
import pkg from '../../../package.json' with { type: 'json' };
import {
  AddressBody,
  ChannelQuote,
  ChannelTypeQuote,
  CreateOrderBody,
  FulfillmentRecord,
  OrderItemBody,
  OrderItemRecord,
  OrderRecord,
  QuoteBody,
  SplitOrderRecord,
} from '../../schemas/orders.ts';
import { CatalogProduct, WarehouseInfo } from '../../schemas/catalog.ts';
import { ErrorEnvelope } from '../../schemas/common.ts';
import { AccountRecord, TransactionRecord } from '../../schemas/account.ts';
import { OAuthErrorBody, TokenRequest, TokenResponse } from '../../schemas/oauth.ts';
import { RefundBody, RefundItemBody, RefundRecord } from '../../schemas/refunds.ts';
import { ClaimRecord, OpenClaimBody } from '../../schemas/claims.ts';
import { StockChange, StockRecord, WarehouseStock } from '../../schemas/stock.ts';
import { SCOPES } from '../../schemas/admin.ts';
import {
  BalanceLowEvent,
  ClaimEvent,
  OrderCancelledEvent,
  RefundEvent,
  SplitOrderEvent,
  StockChangedEntry,
  StockChangedEvent,
  WEBHOOK_EVENT_BODIES,
} from '../../schemas/webhooks.ts';
import { MERCHANT_PREFIX, merchantRouteFor } from '../merchant-routes.ts';
import { ERROR_CATALOGUE, OAUTH_ERRORS } from './error-catalogue.ts';

/**
 * The OpenAPI 3.1 document, generated from the routes as registered: their TypeBox schemas are the
 * ones the server validates requests with and serialises responses by, so the document cannot
 * describe a different API. OpenAPI 3.1 schemas are JSON Schema 2020-12, so TypeBox output goes in
 * almost as is: only TypeBox's cyclic `$defs` are hoisted into `components.schemas`, and payloads
 * that recur get names (by structure) so that generated clients have types to import.
 *
 * Scope: the merchant API under `/openapi` and its OAuth token endpoint. The operator API has a
 * document of its own (admin-openapi.document.ts, `/docs/admin`): its key must not be invited into
 * a browser page meant for merchants (docs/decisions.md).
 */

type Json = Record<string, unknown>;

/** Payloads that get a name in `components.schemas` wherever their exact structure appears. */
const NAMED: Record<string, unknown> = {
  ErrorEnvelope,
  AccountRecord,
  TransactionRecord,
  OAuthError: OAuthErrorBody,
  TokenRequest,
  TokenResponse,
  CreateOrderBody,
  Address: AddressBody,
  OrderLine: OrderItemBody,
  QuoteBody,
  ChannelQuote,
  ChannelTypeQuote,
  OrderRecord,
  OrderItemRecord,
  SplitOrderRecord,
  FulfillmentRecord,
  RefundBody,
  RefundItem: RefundItemBody,
  RefundRecord,
  StockRecord,
  WarehouseStock,
  StockChange,
  CatalogProduct,
  Warehouse: WarehouseInfo,
  StockChangedEvent,
  StockChangedEntry,
  RefundEvent,
  SplitOrderEvent,
  OrderCancelledEvent,
  BalanceLowEvent,
  ClaimEvent,
  OpenClaimBody,
  ClaimRecord,
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Converts route schemas for a document; `named` payloads become `components.schemas` entries (the operator document has its own). */
export class SchemaNamer {
  readonly components: Record<string, Json> = {};
  private readonly byShape = new Map<string, string>();

  constructor(named: Record<string, unknown> = NAMED) {
    for (const [name, schema] of Object.entries(named)) this.byShape.set(JSON.stringify(schema), name);
    for (const [name, schema] of Object.entries(named)) this.components[name] = this.children(clone(schema) as Json);
  }

  /** A schema for the document: named payloads become `$ref`s, cyclic definitions are hoisted. */
  convert(schema: unknown): Json {
    return this.node(clone(schema)) as Json;
  }

  private node(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.node(v));
    if (value === null || typeof value !== 'object') return value;
    const name = this.byShape.get(JSON.stringify(value));
    if (name) return ref(name);
    return this.children(value as Json);
  }

  private children(schema: Json): Json {
    const defs = schema.$defs as Record<string, Json> | undefined;
    if (defs) {
      // TypeBox's Type.Cyclic: `{$defs: {Node: {$id: 'Node', …}}, $ref: 'Node'}`.
      for (const [defName, def] of Object.entries(defs)) {
        const { $id: _id, ...rest } = def;
        this.components[this.cyclicName(defName)] = this.children(this.rewriteRefs(rest, defs) as Json);
      }
      const { $defs: _defs, $ref, ...rest } = schema;
      const target = typeof $ref === 'string' && defs[$ref] ? ref(this.cyclicName($ref)) : {};
      return { ...this.children(rest), ...target };
    }
    const out: Json = {};
    for (const [key, child] of Object.entries(schema)) out[key] = key === 'properties' ? this.properties(child as Json) : this.node(child);
    return out;
  }

  private properties(props: Json): Json {
    return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, this.node(v)]));
  }

  private rewriteRefs(value: unknown, defs: Record<string, unknown>): unknown {
    if (Array.isArray(value)) return value.map((v) => this.rewriteRefs(v, defs));
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value as Json).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' && defs[v] ? `#/components/schemas/${this.cyclicName(v)}` : this.rewriteRefs(v, defs),
      ]),
    );
  }

  private cyclicName(defName: string) {
    return defName === 'Node' ? 'CategoryNode' : defName;
  }
}

/** `/openapi/v2/order/orders/:id` → `/v2/order/orders/{id}` (relative to the `/openapi` server). */
export const openApiPath = (url: string) => url.slice(MERCHANT_PREFIX.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const HEADER_NAMES: Record<string, string> = { 'idempotency-key': 'Idempotency-Key', 'if-match': 'If-Match' };

export function parameters(schema: Json | undefined, where: 'query' | 'path' | 'header', namer: SchemaNamer): Json[] {
  if (!schema?.properties) return [];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(schema.properties as Record<string, Json>).map(([name, prop]) => {
    const { description, ...rest } = prop;
    const p: Json = {
      name: where === 'header' ? (HEADER_NAMES[name] ?? name) : name,
      in: where,
      required: where === 'path' || required.has(name),
      schema: namer.convert(rest),
    };
    if (where === 'header' && name === 'idempotency-key') {
      p.description =
        'Replays the first response for the same key and request for 24 h; a different request with the key → 409/40900. The typed client sends a random UUID.';
    } else if (description) p.description = description;
    return p;
  });
}

const SUCCESS_HEADERS = {
  'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthenticated',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  412: 'Precondition failed',
  413: 'Body too large',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Rate limited',
  500: 'Internal error',
  503: 'Unavailable',
};

/** Which error statuses an operation can answer: every route can be refused; bodies add more. */
export function errorStatuses(method: string): number[] {
  const base = [400, 401, 403, 404, 429, 500, 503];
  return method === 'POST' || method === 'PUT' ? [...base, 409, 413, 415, 422].sort((a, b) => a - b) : base;
}

export function errorResponses(): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const status of [...new Set(ERROR_CATALOGUE.map((e) => e.status))]) {
    const entries = ERROR_CATALOGUE.filter((e) => e.status === status);
    const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
    if (status === 401) headers['WWW-Authenticate'] = { $ref: '#/components/headers/WWW-Authenticate' };
    if (status === 429) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    out[`Error${status}`] = {
      description: `${STATUS_TEXT[status]}: ${entries.map((e) => `${e.code} ${e.when}`).join('; ')}`,
      headers,
      content: {
        'application/json': {
          schema: ref('ErrorEnvelope'),
          examples: Object.fromEntries(
            entries.map((e) => [
              String(e.code),
              {
                summary: e.when,
                value: {
                  code: e.code,
                  message: e.example.message,
                  data: null,
                  requestId: 'req_5f0c9d2be4a84d0f9f1b8a3c6e7d2a10',
                  ...(e.example.errors ? { errors: e.example.errors } : {}),
                },
              },
            ]),
          ),
        },
      },
    };
  }
  const oauthStatuses = [...new Set(OAUTH_ERRORS.map((e) => e.status))];
  for (const status of oauthStatuses) {
    const entries = OAUTH_ERRORS.filter((e) => e.status === status);
    const headers: Json = { 'Cache-Control': { schema: { type: 'string', const: 'no-store' } } };
    if (status === 401) headers['WWW-Authenticate'] = { description: 'Basic realm="stockist", charset="UTF-8"', schema: { type: 'string' } };
    if (status === 429) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
    out[`OAuthError${status}`] = {
      description: `RFC 6749 §5.2 error: ${[...new Set(entries.map((e) => e.error))].join(', ')}`,
      headers,
      content: {
        'application/json': {
          schema: ref('OAuthError'),
          examples: Object.fromEntries(entries.map((e) => [e.error, { value: { error: e.error, error_description: e.description } }])),
        },
      },
    };
  }
  return out;
}

/**
 * A route that sends or takes raw bytes names their media types in `x-binary` (the claim evidence
 * routes): a POST takes them as its body, a GET answers them as an attachment.
 */
export function binaryContent(route: RouteOptions): Json | null {
  const types = (route.schema as Json | undefined)?.['x-binary'] as string[] | undefined;
  return types ? Object.fromEntries(types.map((t) => [t, { schema: { type: 'string', format: 'binary' } }])) : null;
}

/** The 200 of a binary download: the bytes, as an attachment that browsers do not sniff or render. */
export const binaryResponse = (content: Json) => ({
  description: 'the file, as an attachment (`Content-Disposition: attachment`, `X-Content-Type-Options: nosniff`)',
  headers: {
    'Content-Disposition': { schema: { type: 'string' } },
    'X-Content-Type-Options': { schema: { type: 'string', const: 'nosniff' } },
  },
  content,
});

export function requestBody(route: RouteOptions, namer: SchemaNamer, oauth: boolean): Json | undefined {
  const binary = binaryContent(route);
  const method = [route.method].flat()[0];
  if (binary && method === 'POST') return { required: true, content: binary };
  const body = (route.schema as Json | undefined)?.body as Json | undefined;
  if (!body) return undefined;
  const schema = namer.convert(body);
  const required = Array.isArray(body.required) && body.required.length > 0;
  const content: Json = oauth ? { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } } : { 'application/json': { schema } };
  return { required, content };
}

function operation(route: RouteOptions, method: string, namer: SchemaNamer): Json {
  const schema = (route.schema ?? {}) as Json;
  const url = route.url ?? '';
  const oauth = url === `${MERCHANT_PREFIX}/oauth/token`;
  const entry = merchantRouteFor(method, url);
  const op: Json = {
    operationId:
      schema.operationId ??
      `${method.toLowerCase()}${openApiPath(url).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: schema.summary ?? `${method} ${openApiPath(url)}`,
    ...(schema.description ? { description: schema.description } : {}),
    tags: schema.tags ?? ['Merchant'],
  };
  if (entry) op.description = `${op.description ? `${op.description}\n\n` : ''}Scope: \`${entry.scope}\`.`;
  const params = [
    ...parameters(schema.params as Json, 'path', namer),
    ...parameters(schema.querystring as Json, 'query', namer),
    ...parameters(schema.headers as Json, 'header', namer),
  ];
  if (params.length) op.parameters = params;
  const body = requestBody(route, namer, oauth);
  if (body) op.requestBody = body;

  const responses: Record<string, Json> = {};
  const declared = (schema.response ?? {}) as Record<string, Json>;
  for (const [status, response] of Object.entries(declared)) {
    if (/^[45]xx$/.test(status)) continue;
    const description = (response.description as string | undefined) ?? 'success';
    if (response.type === 'null') {
      responses[status] = { description, headers: { 'X-Request-Id': SUCCESS_HEADERS['X-Request-Id'] } };
      continue;
    }
    const headers: Json = oauth ? { 'Cache-Control': { schema: { type: 'string', const: 'no-store' } } } : { ...SUCCESS_HEADERS };
    if (op.operationId === 'getCategories')
      headers.ETag = { description: 'send it back in If-None-Match to get 304 when nothing changed', schema: { type: 'string' } };
    if (schema.headers)
      headers['Idempotent-Replayed'] = { description: '`true` when this is a replay of an earlier response', schema: { type: 'string', const: 'true' } };
    responses[status] = { description, headers, content: { 'application/json': { schema: namer.convert(response) } } };
  }
  const binary = binaryContent(route);
  if (binary && method === 'GET') responses['200'] = binaryResponse(binary);
  if (Object.keys(declared).length === 0) {
    // A route that has not declared its response yet: documented as the envelope around anything.
    responses['200'] = {
      description: 'success',
      headers: SUCCESS_HEADERS,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } },
    };
  }
  if (oauth) {
    for (const status of [...new Set(OAUTH_ERRORS.map((e) => e.status))]) responses[String(status)] = { $ref: `#/components/responses/OAuthError${status}` };
    op.security = [{ clientBasic: [] }, {}];
  } else {
    for (const status of errorStatuses(method)) responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
    if (entry) op.security = [{ merchantBearer: [entry.scope] }, { oauth2: [entry.scope] }];
  }
  op.responses = responses;
  return op;
}

const DESCRIPTION = `The supplier's Order, Refund and Stock Open API.

**Base path.** Every path below is relative to \`/openapi\`; the same routes answer under \`/openapi/openapi\` (the original interface's samples repeat the segment), listed as a second server.

**Envelope.** Every response body except the token endpoint's is \`{"code", "message", "data"}\`; success is HTTP 200 with \`code = 10000\`, \`message = "success"\`. Errors carry \`data: null\`, a \`requestId\` and, where a field or line is at fault, \`errors: [{field, message, …}]\`. \`code\` is HTTP status × 100 + n; every code is listed with an example under its status. Every response carries \`X-Request-Id\`.

**Identifiers** are decimal digit strings; **times** ISO 8601 UTC with a \`Z\`; **money** JSON numbers with two decimals, in the supplier's one currency (the server's \`SUPPLIER_CURRENCY\`), which the answers name beside the amounts: an order's \`currencyCode\`, a quote's \`estimatedFreightCurrency\`, the account's and each transaction's \`currency\`.

**Text.** Strings must be valid Unicode without control characters (tab and newline are allowed in \`remark\`), else 400 naming the field; bodies are UTF-8 (another \`charset\` is 415). SKUs are compared in Unicode NFC; country codes are assigned ISO 3166-1 alpha-2 codes. An order's final amount is at most 100000000.00.

**Authentication.** \`Authorization: Bearer <token>\`: a token from \`POST /oauth/token\` (client credentials, 2 h, with a refresh token) or a long-lived one issued by the operator. Each operation names the scope it needs.

**Idempotency.** Any POST may carry \`Idempotency-Key\`; orders are also idempotent by \`customOrderId\`.

**Rate limits.** Per merchant and environment: all of a merchant's tokens share one bucket, and token grants per client are bounded too. Request bodies are limited per route (128 KiB and 4,096 JSON values; webhook registrations 1 MiB and 16,384 values: 413) and their bytes are budgeted per merchant (32 KiB a second by default, bursts of 1 MiB: 429). Responses carry \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\`; a 429 carries \`Retry-After\`.`;

const EVENT_TEXT: Record<keyof typeof WEBHOOK_EVENT_BODIES, string> = {
  'refund.succeeded': 'A refund was approved (automatically or by the operator); `refund` is the record of `GET /v2/order/orders/refund/{id}`.',
  'refund.failed': 'A refund was rejected; `refund.failureReason` says why.',
  'split_order.shipped': 'A split order left its warehouse; `order` is the order record as committed with the shipment.',
  'split_order.delivered': 'A split order was delivered.',
  'order.cancelled': "A successful refund cancelled the whole order (sent after that refund's event).",
  'stock.changed':
    'Stock moved (orders, refunds, operator changes, imports). Coalesced: at most one delivery per endpoint per interval (5 s by default), ' +
    'each (sku, warehouse) once with its latest quantity, at most 500 changes (more → several deliveries). Deliveries of one endpoint go out ' +
    'one at a time in change-feed order; a failing one holds the later ones back, so applying them in order never leaves a gap. ' +
    '`cursor` continues in `GET /v1/product/stocks/changes`. Endpoints may follow a list of SKUs (`skus`).',
  'balance.low':
    "Your account's `available` (balance + credit limit) fell below its `lowBalanceThreshold` through `transactionId`: sent once per crossing " +
    '(a credit back above the threshold re-arms it). `account` is as after that transaction.',
  'claim.approved':
    'The operator approved your claim; `claim` is the record of `GET /v1/claims/{claimNo}` (with `returnRequired`, send the goods back and post the tracking).',
  'claim.rejected': 'The operator rejected your claim; `claim.decisionReason` says why.',
  'claim.credited': 'Your claim was credited to your account (`claim.amount`, a `claim_credit` transaction).',
  'claim.reshipped': 'Your claim was resolved by a replacement order, charged nothing: `claim.replacementOrderId`.',
};

/**
 * OpenAPI 3.1 `webhooks`: what each event's POST to a registered endpoint carries. No operationId:
 * they are not calls a client makes (the typed client has a method per operationId).
 */
function webhookSection(namer: SchemaNamer): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(WEBHOOK_EVENT_BODIES).map(([type, body]) => [
      type,
      {
        post: {
          summary: `${type} event`,
          description: `${EVENT_TEXT[type as keyof typeof WEBHOOK_EVENT_BODIES]}\n\nSigned per Standard Webhooks (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`); check it with \`verifyWebhook\` of the typed client. Any 2xx within 5 s acknowledges; anything else is retried with the same \`webhook-id\`.`,
          tags: ['Webhooks'],
          requestBody: { required: true, content: { 'application/json': { schema: namer.convert(body) } } },
          responses: { '200': { description: 'acknowledged (any 2xx)' } },
        },
      },
    ]),
  );
}

/**
 * The `paths` object of the routes under `prefix` (each method but HEAD, sorted by path then
 * method, so the document does not depend on registration order): used by both documents.
 */
export function pathsUnder(
  routes: readonly RouteOptions[],
  prefix: string,
  toPath: (url: string) => string,
  toOperation: (route: RouteOptions, method: string) => Json,
): Record<string, Record<string, Json>> {
  const paths: Record<string, Record<string, Json>> = {};
  const operations = routes
    .filter((r) => (r.url ?? '').startsWith(`${prefix}/`))
    .flatMap((r) => (Array.isArray(r.method) ? r.method : [r.method]).filter((m) => m !== 'HEAD').map((m) => ({ route: r, method: m.toUpperCase() })))
    .sort((a, b) => `${toPath(a.route.url!)} ${a.method}`.localeCompare(`${toPath(b.route.url!)} ${b.method}`));
  for (const { route, method } of operations) (paths[toPath(route.url!)] ??= {})[method.toLowerCase()] = toOperation(route, method);
  return paths;
}

/** The document for the routes of one app (the merchant routes and the token endpoint among them). */
export function buildOpenApiDocument(routes: readonly RouteOptions[]): Json {
  const namer = new SchemaNamer();
  const paths = pathsUnder(routes, MERCHANT_PREFIX, openApiPath, (route, method) => operation(route, method, namer));
  return {
    openapi: '3.1.0',
    info: { title: 'Stockist Open API', version: pkg.version, description: DESCRIPTION },
    servers: [
      { url: MERCHANT_PREFIX, description: 'this server' },
      { url: `${MERCHANT_PREFIX}/openapi`, description: 'the same routes under the repeated base segment of the original samples' },
    ],
    tags: [
      { name: 'OAuth', description: 'Access tokens for merchant clients (RFC 6749 client credentials and refresh).' },
      { name: 'Catalogue', description: 'Categories, warehouses and products.' },
      { name: 'Stock', description: 'Stock by SKU or change window, and the change feed.' },
      { name: 'Orders', description: 'Freight quotes, order creation (split by warehouse) and queries.' },
      { name: 'Refunds', description: 'Refund requests, decided asynchronously.' },
      { name: 'Webhooks', description: 'Endpoints that receive signed event deliveries, and their delivery log; the `webhooks` section lists the events.' },
      { name: 'Account', description: 'Your money account with the supplier: balance, billing mode and every charge and credit.' },
      { name: 'Claims', description: 'Claims after shipment: a parcel lost, damaged, wrong or incomplete, resolved by a credit or a replacement order.' },
    ],
    paths,
    webhooks: webhookSection(namer),
    components: {
      schemas: {
        Envelope: {
          type: 'object',
          description: "The envelope around every success body; `data` is the operation's payload.",
          required: ['code', 'message', 'data'],
          properties: { code: { type: 'integer', const: 10000 }, message: { type: 'string', const: 'success' }, data: {} },
        },
        ...namer.components,
      },
      responses: errorResponses(),
      headers: {
        'X-Request-Id': {
          description: "the request's id (the client's own when it sent a sane X-Request-Id); quote it to support",
          schema: { type: 'string' },
        },
        'RateLimit-Limit': { description: "the token's burst size", schema: { type: 'integer' } },
        'RateLimit-Remaining': { description: 'requests left in the bucket', schema: { type: 'integer' } },
        'RateLimit-Reset': { description: 'seconds until the bucket is full again', schema: { type: 'integer' } },
        'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer' } },
        'WWW-Authenticate': { description: 'Bearer realm="stockist", error="invalid_token", error_description="…"', schema: { type: 'string' } },
      },
      securitySchemes: {
        merchantBearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A merchant access token (`stk_test_…` in sandbox, `stk_live_…` in production): from the token endpoint or issued by the operator. Each operation lists the scope it needs.',
        },
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.0 client credentials with the client id and secret the operator issued.',
          flows: {
            clientCredentials: {
              tokenUrl: `${MERCHANT_PREFIX}/oauth/token`,
              refreshUrl: `${MERCHANT_PREFIX}/oauth/token`,
              scopes: Object.fromEntries(SCOPES.map((s) => [s, SCOPE_TEXT[s]])),
            },
          },
        },
        clientBasic: { type: 'http', scheme: 'basic', description: 'client id and secret (or send client_id and client_secret in the body)' },
      },
    },
  };
}

const SCOPE_TEXT: Record<(typeof SCOPES)[number], string> = {
  'catalog:read': 'read categories, warehouses and products',
  'stock:read': 'read stock and the stock change feed',
  'orders:read': 'read orders and refunds, quote freight',
  'orders:write': 'create orders',
  'refunds:write': 'request refunds',
  'account:read': 'read the money account: balance and transactions',
  'claims:read': 'read claims after shipment',
  'claims:write': 'open, cancel and post returns of claims after shipment',
};
