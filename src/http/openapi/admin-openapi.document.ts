import { AccountRecord, TransactionRecord } from '../../schemas/account.ts';
import type { RouteOptions } from 'fastify';
import pkg from '../../../package.json' with { type: 'json' };
import {
  AdminCategory,
  AdminChannel,
  AdminProduct,
  AdminWarehouse,
  AuditPage,
  IssuedTokenRecord,
  MerchantRecord,
  NewMerchantRecord,
} from '../../schemas/admin-responses.ts';
import { ErrorEnvelope } from '../../schemas/common.ts';
import { AddressBody, FulfillmentRecord, OrderItemRecord, OrderRecord, SplitOrderRecord } from '../../schemas/orders.ts';
import { RefundRecord } from '../../schemas/refunds.ts';
import { ClaimRecord } from '../../schemas/claims.ts';
import { SchemaNamer, binaryContent, binaryResponse, errorResponses, errorStatuses, parameters, pathsUnder, requestBody } from './openapi.document.ts';

/**
 * The operator API's OpenAPI 3.1 document (issue 16): generated, like the merchant one, from the
 * `/admin/v1` routes as registered, so it describes what the server validates and serialises. It
 * is a document of its own, served at `/docs/admin/openapi.json` where the operator API is served
 * (ADMIN_PORT when set); the merchants' `/docs` never lists an operator route (docs/decisions.md).
 */

type Json = Record<string, unknown>;

export const ADMIN_PREFIX = '/admin/v1';

/** Payloads named in `components.schemas` wherever their exact structure appears. */
const NAMED: Record<string, unknown> = {
  ErrorEnvelope,
  Warehouse: AdminWarehouse,
  Category: AdminCategory,
  Product: AdminProduct,
  Channel: AdminChannel,
  Merchant: MerchantRecord,
  NewMerchant: NewMerchantRecord,
  IssuedToken: IssuedTokenRecord,
  Address: AddressBody,
  OrderRecord,
  OrderItemRecord,
  SplitOrderRecord,
  FulfillmentRecord,
  RefundRecord,
  AuditPage,
  AccountRecord,
  TransactionRecord,
  ClaimRecord,
};

/** `/admin/v1/merchants/:id/tokens` → `/merchants/{id}/tokens` (relative to the `/admin/v1` server). */
export const adminOpenApiPath = (url: string) => url.slice(ADMIN_PREFIX.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The operator API is not rate limited (it is the supplier's own key), so 429 is never among its answers. */
const adminErrorStatuses = (method: string) => errorStatuses(method === 'PATCH' ? 'POST' : method).filter((s) => s !== 429);

function operation(route: RouteOptions, method: string, namer: SchemaNamer): Json {
  const schema = (route.schema ?? {}) as Json;
  const path = adminOpenApiPath(route.url ?? '');
  const op: Json = {
    operationId: `${method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: schema.summary ?? `${method} ${path}`,
    ...(schema.description ? { description: schema.description } : {}),
    tags: schema.tags ?? ['Operator'],
  };
  const params = [
    ...parameters(schema.params as Json, 'path', namer),
    ...parameters(schema.querystring as Json, 'query', namer),
    ...parameters(schema.headers as Json, 'header', namer),
  ];
  if (params.length) op.parameters = params;
  const body = requestBody(route, namer, false);
  if (body) op.requestBody = body;
  const responses: Record<string, Json> = {};
  const declared = (schema.response ?? {}) as Record<string, Json>;
  // A write that takes If-Match (http/etag.ts) can be refused 412 and answers the new ETag.
  const conditional = ((schema.headers as Json | undefined)?.properties as Json | undefined)?.['if-match'] !== undefined;
  const etag = { ETag: { description: 'The resource’s version after the write, for the next If-Match', schema: { type: 'string' } } };
  for (const [status, response] of Object.entries(declared)) {
    if (/^[45]xx$/.test(status)) continue;
    responses[status] = {
      description: (response.description as string | undefined) ?? 'success',
      headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' }, ...(conditional ? etag : {}) },
      content: { 'application/json': { schema: namer.convert(response) } },
    };
  }
  const binary = binaryContent(route);
  if (binary && method === 'GET') responses['200'] = binaryResponse(binary);
  const statuses = conditional ? [...adminErrorStatuses(method), 412].sort((a, b) => a - b) : adminErrorStatuses(method);
  for (const status of statuses) responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
  op.responses = responses;
  op.security = [{ adminKey: [] }];
  return op;
}

const DESCRIPTION = `The supplier's own API: catalogue, stock, merchants and their credentials, orders, fulfilment, refund review, webhooks and the audit log. Merchants never see it (their reference is \`/docs\`).

**Where.** Every path is relative to \`/admin/v1\`, on ADMIN_PORT when it is set (otherwise on the one port). **Authentication.** \`Authorization: Bearer <ADMIN_API_KEY>\`.

**Envelope.** As the merchant API: \`{"code", "message", "data"}\`, success is HTTP 200 with \`code = 10000\`; errors carry \`data: null\`, a \`requestId\` and, where a field is at fault, \`errors: [{field, message, …}]\`. Every response carries \`X-Request-Id\` (a sane \`X-Request-Id\` sent by the caller is kept).

**Audit.** Every write is recorded in the audit log (\`GET /audit\`) with the key's fingerprint as the actor, the action, the target, a before/after summary, the time and the request id — in the same transaction as the change; a refused write records nothing. Secrets (client secrets, tokens) are never recorded.

**Identifiers** of merchants, orders, refunds and tokens are decimal digit strings; **times** ISO 8601 UTC with a \`Z\`; **money** JSON numbers with two decimals, in the supplier's one currency (\`SUPPLIER_CURRENCY\`; named by orders' \`currencyCode\` and accounts' \`currency\`).`;

/** The document for the operator routes of one app. */
export function buildAdminOpenApiDocument(routes: readonly RouteOptions[]): Json {
  const namer = new SchemaNamer(NAMED);
  const paths = pathsUnder(routes, ADMIN_PREFIX, adminOpenApiPath, (route, method) => operation(route, method, namer));
  const errors = Object.fromEntries(Object.entries(errorResponses()).filter(([name]) => /^Error\d+$/.test(name) && name !== 'Error429'));
  return {
    openapi: '3.1.0',
    info: { title: 'Stockist operator API', version: pkg.version, description: DESCRIPTION },
    servers: [{ url: ADMIN_PREFIX, description: 'this server (ADMIN_PORT when set)' }],
    tags: [
      { name: 'Catalogue', description: 'Warehouses, categories, products, shipping channels and catalogue import.' },
      { name: 'Stock', description: 'Absolute and relative stock changes.' },
      { name: 'Merchants', description: 'Merchants, their OAuth clients and bearer tokens.' },
      { name: 'Orders', description: "Every merchant's orders; shipping and delivery of split orders." },
      { name: 'Refunds', description: 'Refund review (manual, or after the worker gave up).' },
      { name: 'Claims', description: 'Claims after shipment: the queue, approve (with or without a return), reject, received, switch the resolution.' },
      { name: 'Webhooks', description: "Every merchant's webhook endpoints: disable and re-enable." },
      { name: 'Audit', description: 'Who changed what, newest first.' },
      { name: 'Accounts', description: "Merchants' money accounts: billing terms, payments received, adjustments, transactions (SPEC §15)." },
    ],
    paths,
    components: {
      schemas: namer.components,
      responses: errors,
      headers: {
        'X-Request-Id': {
          description: "the request's id (the caller's own when it sent a sane X-Request-Id); the audit row of a write carries it",
          schema: { type: 'string' },
        },
        'WWW-Authenticate': { description: 'Bearer realm="stockist"', schema: { type: 'string' } },
      },
      securitySchemes: {
        adminKey: { type: 'http', scheme: 'bearer', description: 'the ADMIN_API_KEY of this deployment' },
      },
    },
  };
}
