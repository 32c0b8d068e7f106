/**
 * SPEC §1's error catalogue with one example body each: the OpenAPI document shows these under
 * every status, and a test keeps this list, the codes the sources raise and docs/errors.md in step.
 */
export interface CatalogueEntry {
  status: number;
  code: number;
  /** What the code means in plain words (the business manager's Usage page shows them beside the code). */
  words: string;
  when: string;
  example: { message: string; errors?: Record<string, unknown>[] };
}

export const ERROR_CATALOGUE: readonly CatalogueEntry[] = [
  {
    status: 400,
    code: 40000,
    words: 'Invalid request: a field breaks a rule',
    when: 'validation failed (field errors listed)',
    example: { message: 'validation failed', errors: [{ field: 'orderItemsList[1].quantity', message: 'must be an integer of at least 1' }] },
  },
  {
    status: 400,
    code: 40001,
    words: 'The body is not valid JSON',
    when: 'body is not valid JSON',
    example: { message: 'body is not valid JSON: Unexpected end of JSON input' },
  },
  {
    status: 401,
    code: 40100,
    words: 'Not signed in: the token is missing, expired or revoked',
    when: 'token missing, unknown, expired or revoked (WWW-Authenticate: Bearer …)',
    example: { message: 'the access token has expired' },
  },
  {
    status: 403,
    code: 40300,
    words: 'Not allowed: the token lacks the scope, or the account is disabled',
    when: 'token lacks the scope, or merchant disabled',
    example: { message: 'this token lacks the orders:write scope' },
  },
  {
    status: 403,
    code: 40301,
    words: 'Refused: HTTPS is required',
    when: 'plain HTTP where HTTPS is required',
    example: { message: 'HTTPS is required: call this API over https://' },
  },
  {
    status: 404,
    code: 40400,
    words: 'Not found',
    when: "route, order, refund or resource not found — including another merchant's",
    example: { message: 'order not found' },
  },
  {
    status: 409,
    code: 40900,
    words: 'Already used: the same key or custom order id with a different request',
    when: 'idempotency conflict (same key or customOrderId, different request; or still in flight)',
    example: { message: 'this Idempotency-Key was used with a different request' },
  },
  {
    status: 409,
    code: 40901,
    words: 'Refund refused: the items have shipped',
    when: "refund refused: the items' order has shipped",
    example: { message: 'split order 1000000371652 has shipped; its items cannot be refunded' },
  },
  {
    status: 409,
    code: 40902,
    words: 'Refund refused: more than can still be refunded',
    when: 'refund quantity exceeds what is still refundable',
    example: {
      message: 'quantity exceeds what is refundable',
      errors: [{ field: 'orderItems[0].quantity', message: 'at most 1 can still be refunded', refundable: 1 }],
    },
  },
  {
    status: 409,
    code: 40903,
    words: 'Refused in the current state',
    when: 'operator action refused by state (e.g. ship while a refund is pending); a claim decision, cancel or return in a state that does not allow it',
    example: { message: 'split order 1000000371652 has a pending refund' },
  },
  {
    status: 409,
    code: 40904,
    words: 'Claim refused: not shipped, or shipped too long ago',
    when: 'claim refused: the split order has not shipped (request a refund instead), or it shipped more than CLAIM_WINDOW_DAYS ago',
    example: {
      message:
        'split order 5000000000001 is waiting_to_ship: a claim is for a parcel that shipped; before shipment, request a refund (POST /openapi/v2/order/orders/1000000000001/refund)',
      errors: [{ field: 'orderId', message: 'not shipped', status: 'waiting_to_ship' }],
    },
  },
  {
    status: 408,
    code: 40800,
    words: 'The request arrived too slowly',
    when: 'the request (head and body) did not arrive within REQUEST_TIMEOUT_MS; the connection is closed',
    example: { message: 'the request was not received in time' },
  },
  {
    status: 412,
    code: 41200,
    words: 'Changed since it was read',
    when: 'operator API: If-Match names another version of the resource (read it again for its ETag), or the resource does not exist; nothing written',
    example: {
      message: 'product MUG-1 has changed since you read it (it is at version 4 now); nothing was written: read it again and send its ETag in If-Match',
    },
  },
  {
    status: 413,
    code: 41300,
    words: 'The body is too large',
    when: "body larger than the route's limit (128 KiB on merchant routes, 1 MiB for webhook registrations; never above BODY_LIMIT_BYTES)",
    example: { message: 'request body is larger than the limit' },
  },
  {
    status: 413,
    code: 41301,
    words: 'The body holds too many values',
    when: 'body holds more JSON values than the route ever needs (4,096; 16,384 for webhook registrations), counted before parsing',
    example: { message: 'the body holds more than 4096 JSON values (objects, arrays and their elements), more than this route ever needs' },
  },
  {
    status: 414,
    code: 41400,
    words: 'A part of the address is too long',
    when: 'a path parameter is longer than the limit',
    example: { message: 'a path parameter is longer than the limit' },
  },
  {
    status: 415,
    code: 41500,
    words: 'The body is not JSON',
    when: 'body sent with a content type other than JSON, or in a charset other than UTF-8',
    example: { message: 'send the body as JSON with Content-Type: application/json' },
  },
  {
    status: 431,
    code: 43100,
    words: 'The headers are too large',
    when: 'request headers larger than MAX_HEADER_BYTES',
    example: { message: 'the request headers are larger than the limit' },
  },
  {
    status: 422,
    code: 42200,
    words: 'Unknown product',
    when: 'unknown SKU(s) — each listed',
    example: { message: 'unknown SKU(s): NOPE-1', errors: [{ field: 'orderItemsList[0].sku', message: 'unknown SKU', sku: 'NOPE-1' }] },
  },
  {
    status: 422,
    code: 42201,
    words: 'Not enough stock',
    when: 'insufficient stock — each short line listed with sku, requested, available',
    example: {
      message: 'insufficient stock',
      errors: [{ field: 'orderItemsList[0].quantity', message: 'insufficient stock', sku: 'DEMO-0001', requested: 50, available: 12 }],
    },
  },
  {
    status: 422,
    code: 42202,
    words: 'No shipping channel to that destination',
    when: 'no logistics channel serves a warehouse/destination pair',
    example: {
      message: 'no logistics channel ships from US01 to CN',
      errors: [{ field: 'shipToCountry', message: 'no channel from US01 to CN', warehouseCode: 'US01', country: 'CN' }],
    },
  },
  {
    status: 422,
    code: 42203,
    words: 'Not enough funds on the account',
    when: 'insufficient funds: a prepaid account cannot cover the order (nothing reserved, charged or stored)',
    example: {
      message: 'insufficient funds: the order needs 54.2 and the account has 20 available',
      errors: [{ field: 'account', message: 'the prepaid account cannot cover the order', required: 54.2, available: 20 }],
    },
  },
  {
    status: 422,
    code: 42204,
    words: 'Claim refused: more than can still be claimed',
    when: 'claim quantity exceeds what can still be claimed: shipped − refunded − held by other claims (each line listed)',
    example: {
      message: 'claim quantity exceeds what can still be claimed',
      errors: [{ field: 'items[0].quantity', message: 'at most 1 of MUG-1 can still be claimed', sku: 'MUG-1', requested: 2, claimable: 1 }],
    },
  },
  {
    status: 429,
    code: 42900,
    words: 'Too many requests (rate limit)',
    when: 'rate limited (Retry-After header)',
    example: { message: 'rate limit exceeded; retry after 1 s' },
  },
  {
    status: 429,
    code: 42901,
    words: 'A statement is already being prepared',
    when: 'business manager: a statement of this merchant is already being prepared (Retry-After header)',
    example: { message: 'A statement of this account is already being prepared (at most 1 at a time); try again in 5 s, once it has downloaded' },
  },
  {
    status: 500,
    code: 50000,
    words: 'Server error',
    when: 'internal error (no stack, no SQL in the body; logged with the request id)',
    example: { message: 'internal error; quote the requestId when contacting support' },
  },
  {
    status: 503,
    code: 50300,
    words: 'Unavailable for a moment',
    when: 'overloaded or storage unavailable',
    example: { message: 'storage is unavailable, retry shortly' },
  },
];

/** RFC 6749 §5.2 errors of the token endpoint, by HTTP status, with an example description. */
export const OAUTH_ERRORS: readonly { status: number; error: string; description: string }[] = [
  { status: 400, error: 'invalid_request', description: 'grant_type is required' },
  { status: 400, error: 'invalid_grant', description: 'the refresh token was already used; its family has been revoked' },
  { status: 400, error: 'unauthorized_client', description: 'this merchant is disabled' },
  { status: 400, error: 'unsupported_grant_type', description: 'grant_type password is not supported; use client_credentials or refresh_token' },
  { status: 400, error: 'invalid_scope', description: 'unknown scope: orders:delete' },
  { status: 401, error: 'invalid_client', description: 'unknown client or wrong secret' },
  { status: 403, error: 'invalid_request', description: 'HTTPS is required: call this API over https://' },
  { status: 413, error: 'invalid_request', description: 'request body is larger than the limit' },
  { status: 415, error: 'invalid_request', description: 'the body\'s charset "iso-8859-1" is not supported: send UTF-8' },
  { status: 429, error: 'rate_limited', description: 'too many failed (or simultaneous) attempts for this client from this address; retry after 30 s' },
  { status: 500, error: 'server_error', description: 'internal error; quote the X-Request-Id header when contacting support' },
  { status: 503, error: 'temporarily_unavailable', description: 'storage is unavailable, retry shortly' },
];
