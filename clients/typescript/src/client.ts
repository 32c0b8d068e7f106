import { randomUUID } from 'node:crypto';
import { errorFromResponse, parseRetryAfter, StockistError } from './errors.ts';
import type { components, operations } from './schema.d.ts';

export type Schemas = components['schemas'];
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** `data` of an operation's success envelope. */
export type ResponseData<K extends keyof operations> = JsonOf<operations[K]['responses'][200]> extends { data: infer D } ? D : never;
/** An operation's query parameters. */
export type QueryOf<K extends keyof operations> = NonNullable<operations[K]['parameters']['query']>;
/** An operation's JSON body. */
export type BodyOf<K extends keyof operations> = JsonOf<NonNullable<operations[K]['requestBody']>>;
export type TokenResponse = Schemas['TokenResponse'];

export interface StockistClientOptions {
  /** The server's origin, e.g. `https://127.0.0.1:8443` (a trailing `/openapi` is accepted too). */
  baseUrl: string;
  /** A long-lived token issued by the operator. Alternatively give clientId and clientSecret. */
  accessToken?: string;
  /** OAuth client credentials: the client gets, refreshes and renews its own tokens. */
  clientId?: string;
  clientSecret?: string;
  /** Space-separated scopes to ask for (default: all the client may have). */
  scope?: string;
  /** Retries on 429, 503 and network failures (default 3). */
  maxRetries?: number;
  /** First backoff delay without Retry-After, doubled each retry, with jitter (default 250 ms). */
  retryBaseDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the error is thrown (default 30 s). */
  maxRetryDelayMs?: number;
  /** Refresh the access token this long before it expires (default 60 s). */
  refreshMarginSeconds?: number;
  /** Another fetch (tests, proxies, a custom TLS agent). */
  fetch?: typeof fetch;
  /** Extra init passed to every fetch, e.g. `{ dispatcher }` for an undici Agent. */
  fetchInit?: Record<string, unknown>;
}

export interface PostOptions {
  /** Sent as `Idempotency-Key` (POST and PUT); default a random UUID, reused across this call's own retries. */
  idempotencyKey?: string;
}

interface CallOptions extends PostOptions {
  query?: Record<string, unknown>;
  body?: unknown;
  form?: URLSearchParams;
  auth?: boolean;
  headers?: Record<string, string>;
  /** The body is the payload itself (the token endpoint), not an envelope. */
  raw?: boolean;
  /** Raw bytes as the body, with their media type (a claim's evidence upload). */
  bytes?: { data: Uint8Array<ArrayBuffer> | Blob; contentType: string };
  /** The success body is a file: returned as bytes with its media type, not read as JSON. */
  binary?: boolean;
}

/** A downloaded file: its bytes and media type. */
export interface DownloadedFile {
  contentType: string;
  bytes: Uint8Array;
}

interface HeldToken {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: number;
}

/** Client method for each operationId of the document (a test keeps the two in step). */
export const OPERATION_METHODS = {
  issueToken: 'fetchToken',
  getCategories: 'getCategories',
  getWarehouses: 'getWarehouses',
  listProducts: 'listProducts',
  queryStocks: 'queryStocks',
  stockChanges: 'stockChanges',
  quoteChannels: 'quoteChannels',
  quoteChannelTypes: 'quoteChannelTypes',
  createOrder: 'createOrder',
  createOrderV2: 'createOrderV2',
  queryOrders: 'queryOrders',
  getOrder: 'getOrder',
  requestRefund: 'requestRefund',
  listRefunds: 'listRefunds',
  createWebhook: 'createWebhook',
  listWebhooks: 'listWebhooks',
  replaceWebhook: 'replaceWebhook',
  deleteWebhook: 'deleteWebhook',
  rotateWebhookSecret: 'rotateWebhookSecret',
  listWebhookDeliveries: 'listWebhookDeliveries',
  retryWebhookDelivery: 'retryWebhookDelivery',
  getAccount: 'getAccount',
  listAccountTransactions: 'listAccountTransactions',
  openClaim: 'openClaim',
  listClaims: 'listClaims',
  getClaim: 'getClaim',
  cancelClaim: 'cancelClaim',
  postClaimReturn: 'postClaimReturn',
  uploadClaimEvidence: 'uploadClaimEvidence',
  downloadClaimEvidence: 'downloadClaimEvidence',
} as const satisfies Record<keyof operations, string>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A typed client for the Stockist merchant API. Methods return the envelope's `data`; refusals
 * throw `StockistError`. POSTs carry an `Idempotency-Key` (reused across retries, so a retried
 * create never makes two orders); 429 and 503 are retried with backoff, honouring `Retry-After`.
 */
export class StockistClient {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;
  private readonly maxRetries: number;
  private readonly retryBaseDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly refreshMarginMs: number;
  private token: HeldToken | null = null;
  private pendingToken: Promise<HeldToken> | null = null;
  private categories: { etag: string; data: ResponseData<'getCategories'> } | null = null;

  constructor(private readonly options: StockistClientOptions) {
    if (!options.accessToken && !(options.clientId && options.clientSecret)) throw new Error('StockistClient: give accessToken, or clientId and clientSecret');
    this.base = `${options.baseUrl.replace(/\/+$/, '').replace(/\/openapi$/, '')}/openapi`;
    this.fetchImpl = options.fetch ?? fetch;
    this.maxRetries = options.maxRetries ?? 3;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 250;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.refreshMarginMs = (options.refreshMarginSeconds ?? 60) * 1000;
  }

  // ---- catalogue -------------------------------------------------------------------------

  /** The category tree; revalidated with its ETag, so an unchanged tree costs a 304. */
  async getCategories(): Promise<ResponseData<'getCategories'>> {
    const cached = this.categories;
    const { data, response } = await this.call<ResponseData<'getCategories'>>('GET', '/v1/product/category', {
      headers: cached ? { 'If-None-Match': cached.etag } : {},
    });
    if (response.status === 304 && cached) return cached.data;
    const etag = response.headers.get('etag');
    this.categories = etag ? { etag, data } : null;
    return data;
  }

  async getWarehouses(): Promise<ResponseData<'getWarehouses'>> {
    return (await this.call<ResponseData<'getWarehouses'>>('GET', '/v1/product/countryAndWarehouse')).data;
  }

  async listProducts(query: QueryOf<'listProducts'> = {}): Promise<ResponseData<'listProducts'>> {
    return (await this.call<ResponseData<'listProducts'>>('GET', '/v1/product/products', { query })).data;
  }

  // ---- stock -----------------------------------------------------------------------------

  async queryStocks(query: QueryOf<'queryStocks'>): Promise<ResponseData<'queryStocks'>> {
    return (await this.call<ResponseData<'queryStocks'>>('GET', '/v1/product/stocks', { query })).data;
  }

  async stockChanges(query: QueryOf<'stockChanges'> = {}): Promise<ResponseData<'stockChanges'>> {
    return (await this.call<ResponseData<'stockChanges'>>('GET', '/v1/product/stocks/changes', { query })).data;
  }

  // ---- orders ----------------------------------------------------------------------------

  async quoteChannels(body: BodyOf<'quoteChannels'>, options: PostOptions = {}): Promise<ResponseData<'quoteChannels'>> {
    return (await this.call<ResponseData<'quoteChannels'>>('POST', '/v2/order/orders/channel', { body, ...options })).data;
  }

  async quoteChannelTypes(body: BodyOf<'quoteChannelTypes'>, options: PostOptions = {}): Promise<ResponseData<'quoteChannelTypes'>> {
    return (await this.call<ResponseData<'quoteChannelTypes'>>('POST', '/v2/order/orders/automaticSplit/channel', { body, ...options })).data;
  }

  /** Creates an order; returns its id (kkOrderId). */
  async createOrder(body: BodyOf<'createOrder'>, options: PostOptions = {}): Promise<ResponseData<'createOrder'>> {
    return (await this.call<ResponseData<'createOrder'>>('POST', '/v1/order/orders', { body, ...options })).data;
  }

  /** The same as createOrder, through the `/v2` alias path. */
  async createOrderV2(body: BodyOf<'createOrderV2'>, options: PostOptions = {}): Promise<ResponseData<'createOrderV2'>> {
    return (await this.call<ResponseData<'createOrderV2'>>('POST', '/v2/order/orders', { body, ...options })).data;
  }

  /** One page: by `pageNumber`, or by `cursor` (the previous page's `nextCursor`). */
  async queryOrders(query: QueryOf<'queryOrders'> = {}): Promise<ResponseData<'queryOrders'>> {
    return (await this.call<ResponseData<'queryOrders'>>('GET', '/v2/order/orders', { query })).data;
  }

  /**
   * Every order the query selects, page after page by keyset cursor: never skips an order that
   * existed when the walk began, even while orders are created or change (a changed order may
   * come again, newer). `for await (const order of client.iterateOrders({ updateStartTime }))`.
   */
  async *iterateOrders(query: Omit<QueryOf<'queryOrders'>, 'cursor' | 'pageNumber'> = {}): AsyncGenerator<Schemas['OrderRecord'], void, undefined> {
    let page = await this.queryOrders(query);
    for (;;) {
      yield* page.list;
      if (page.nextCursor === null) return;
      page = await this.queryOrders({ ...query, cursor: page.nextCursor });
    }
  }

  /** One order by parent (kkOrderId) or split order id. */
  async getOrder(id: string): Promise<ResponseData<'getOrder'>> {
    return (await this.call<ResponseData<'getOrder'>>('GET', `/v2/order/orders/${encodeURIComponent(id)}`)).data;
  }

  // ---- account (money: SPEC §15) ----------------------------------------------------------

  /** Your money account in this server's environment: balance, credit limit, available, billing mode. */
  async getAccount(): Promise<ResponseData<'getAccount'>> {
    return (await this.call<ResponseData<'getAccount'>>('GET', '/v1/account')).data;
  }

  /** One page of the account's transactions, newest first: by `pageNumber`, or by `cursor`. */
  async listAccountTransactions(query: QueryOf<'listAccountTransactions'> = {}): Promise<ResponseData<'listAccountTransactions'>> {
    return (await this.call<ResponseData<'listAccountTransactions'>>('GET', '/v1/account/transactions', { query })).data;
  }

  /** Every transaction the query selects, newest first, page after page by keyset cursor. */
  async *iterateAccountTransactions(
    query: Omit<QueryOf<'listAccountTransactions'>, 'cursor' | 'pageNumber'> = {},
  ): AsyncGenerator<Schemas['TransactionRecord'], void, undefined> {
    let page = await this.listAccountTransactions(query);
    for (;;) {
      yield* page.list;
      if (page.nextCursor === null) return;
      page = await this.listAccountTransactions({ cursor: page.nextCursor });
    }
  }

  /**
   * The account, as `client.account.get()` and `for await (const t of client.account.transactions({ type: 'order_charge' }))`.
   */
  readonly account = {
    get: () => this.getAccount(),
    transactions: (query: Omit<QueryOf<'listAccountTransactions'>, 'cursor' | 'pageNumber'> = {}) => this.iterateAccountTransactions(query),
  };

  // ---- claims after shipment (SPEC §18) --------------------------------------------------

  /** Opens a claim on a shipped split order (`orderId` = `splitOrders[].id`); returns `{claimNo, status: "open"}`. */
  async openClaim(body: BodyOf<'openClaim'>, options: PostOptions = {}): Promise<ResponseData<'openClaim'>> {
    return (await this.call<ResponseData<'openClaim'>>('POST', '/v1/claims', { body, ...options })).data;
  }

  /** One page of your claims, newest first: by `pageNumber`, or by `cursor`. */
  async listClaims(query: QueryOf<'listClaims'> = {}): Promise<ResponseData<'listClaims'>> {
    return (await this.call<ResponseData<'listClaims'>>('GET', '/v1/claims', { query })).data;
  }

  /** Every claim the query selects, newest first, page after page by keyset cursor. */
  async *iterateClaims(query: Omit<QueryOf<'listClaims'>, 'cursor' | 'pageNumber'> = {}): AsyncGenerator<Schemas['ClaimRecord'], void, undefined> {
    let page = await this.listClaims(query);
    for (;;) {
      yield* page.list;
      if (page.nextCursor === null) return;
      page = await this.listClaims({ cursor: page.nextCursor });
    }
  }

  async getClaim(claimNo: string): Promise<ResponseData<'getClaim'>> {
    return (await this.call<ResponseData<'getClaim'>>('GET', `/v1/claims/${encodeURIComponent(claimNo)}`)).data;
  }

  /** Withdraws an open claim. */
  async cancelClaim(claimNo: string, options: PostOptions = {}): Promise<ResponseData<'cancelClaim'>> {
    return (await this.call<ResponseData<'cancelClaim'>>('POST', `/v1/claims/${encodeURIComponent(claimNo)}/cancel`, { ...options })).data;
  }

  /** The return's carrier and tracking code, when the approval asked for the goods back. */
  async postClaimReturn(claimNo: string, body: BodyOf<'postClaimReturn'>, options: PostOptions = {}): Promise<ResponseData<'postClaimReturn'>> {
    return (await this.call<ResponseData<'postClaimReturn'>>('POST', `/v1/claims/${encodeURIComponent(claimNo)}/return`, { body, ...options })).data;
  }

  /**
   * Uploads one evidence file (JPEG, PNG, WebP or PDF, at most 5 MB; the server reads the type from
   * the bytes); returns `{fileId, size, contentType}` to name in `evidence` when opening the claim.
   */
  async uploadClaimEvidence(
    data: Uint8Array<ArrayBuffer> | Blob,
    contentType: string,
    options: PostOptions = {},
  ): Promise<ResponseData<'uploadClaimEvidence'>> {
    return (await this.call<ResponseData<'uploadClaimEvidence'>>('POST', '/v1/claims/files', { bytes: { data, contentType }, ...options })).data;
  }

  /** Downloads one of your evidence files. */
  async downloadClaimEvidence(fileId: string): Promise<DownloadedFile> {
    return (await this.call<DownloadedFile>('GET', `/v1/claims/files/${encodeURIComponent(fileId)}`, { binary: true })).data;
  }

  /**
   * Claims, as `client.claims.open({...})`, `client.claims.get(claimNo)` and
   * `for await (const claim of client.claims.list({ status: 'open' }))`.
   */
  readonly claims = {
    open: (body: BodyOf<'openClaim'>, options: PostOptions = {}) => this.openClaim(body, options),
    get: (claimNo: string) => this.getClaim(claimNo),
    list: (query: Omit<QueryOf<'listClaims'>, 'cursor' | 'pageNumber'> = {}) => this.iterateClaims(query),
    cancel: (claimNo: string, options: PostOptions = {}) => this.cancelClaim(claimNo, options),
    postReturn: (claimNo: string, body: BodyOf<'postClaimReturn'>, options: PostOptions = {}) => this.postClaimReturn(claimNo, body, options),
    upload: (data: Uint8Array<ArrayBuffer> | Blob, contentType: string, options: PostOptions = {}) => this.uploadClaimEvidence(data, contentType, options),
    download: (fileId: string) => this.downloadClaimEvidence(fileId),
  };

  // ---- refunds ---------------------------------------------------------------------------

  /** Requests a refund of order `orderId`; returns the refund number. Decided asynchronously. */
  async requestRefund(orderId: string, body: BodyOf<'requestRefund'> = {}, options: PostOptions = {}): Promise<ResponseData<'requestRefund'>> {
    return (await this.call<ResponseData<'requestRefund'>>('POST', `/v2/order/orders/${encodeURIComponent(orderId)}/refund`, { body, ...options })).data;
  }

  async listRefunds(orderId: string, query: QueryOf<'listRefunds'> = {}): Promise<ResponseData<'listRefunds'>> {
    return (await this.call<ResponseData<'listRefunds'>>('GET', `/v2/order/orders/refund/${encodeURIComponent(orderId)}`, { query })).data;
  }

  // ---- webhooks (verify deliveries with `verifyWebhook`) ---------------------------------

  /** Registers an endpoint; the returned `secret` is shown only this once. */
  async createWebhook(body: BodyOf<'createWebhook'>, options: PostOptions = {}): Promise<ResponseData<'createWebhook'>> {
    return (await this.call<ResponseData<'createWebhook'>>('POST', '/v1/webhooks', { body, ...options })).data;
  }

  async listWebhooks(): Promise<ResponseData<'listWebhooks'>> {
    return (await this.call<ResponseData<'listWebhooks'>>('GET', '/v1/webhooks')).data;
  }

  /** Replaces an endpoint's url, events and `skus` (stock.changed); `cursor` moves it in the change feed. The secret stays. */
  async replaceWebhook(id: string, body: BodyOf<'replaceWebhook'>, options: PostOptions = {}): Promise<ResponseData<'replaceWebhook'>> {
    return (await this.call<ResponseData<'replaceWebhook'>>('PUT', `/v1/webhooks/${encodeURIComponent(id)}`, { body, ...options })).data;
  }

  async deleteWebhook(id: string): Promise<ResponseData<'deleteWebhook'>> {
    return (await this.call<ResponseData<'deleteWebhook'>>('DELETE', `/v1/webhooks/${encodeURIComponent(id)}`)).data;
  }

  /** A new secret; the previous one keeps signing beside it for a grace period. */
  async rotateWebhookSecret(id: string, options: PostOptions = {}): Promise<ResponseData<'rotateWebhookSecret'>> {
    return (await this.call<ResponseData<'rotateWebhookSecret'>>('POST', `/v1/webhooks/${encodeURIComponent(id)}/rotate-secret`, { ...options })).data;
  }

  async listWebhookDeliveries(id: string, query: QueryOf<'listWebhookDeliveries'> = {}): Promise<ResponseData<'listWebhookDeliveries'>> {
    return (await this.call<ResponseData<'listWebhookDeliveries'>>('GET', `/v1/webhooks/${encodeURIComponent(id)}/deliveries`, { query })).data;
  }

  async retryWebhookDelivery(id: string, deliveryId: string, options: PostOptions = {}): Promise<ResponseData<'retryWebhookDelivery'>> {
    return (
      await this.call<ResponseData<'retryWebhookDelivery'>>(
        'POST',
        `/v1/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/retry`,
        { ...options },
      )
    ).data;
  }

  // ---- tokens ----------------------------------------------------------------------------

  /**
   * A valid access token: the fixed one, or one from the token endpoint — refreshed before it
   * expires, and bought anew with the client credentials when the refresh token no longer works.
   */
  async getAccessToken(): Promise<string> {
    if (this.options.accessToken) return this.options.accessToken;
    if (this.token && Date.now() < this.token.expiresAt - this.refreshMarginMs) return this.token.accessToken;
    // One token request at a time, however many calls are waiting for it.
    this.pendingToken ??= this.renewToken().finally(() => (this.pendingToken = null));
    return (await this.pendingToken).accessToken;
  }

  /** `POST /oauth/token` with the client's credentials (HTTP Basic); the raw RFC 6749 response. */
  async fetchToken(
    grant: { grant_type: 'client_credentials'; scope?: string } | { grant_type: 'refresh_token'; refresh_token: string; scope?: string },
  ): Promise<TokenResponse> {
    const form = new URLSearchParams(Object.entries(grant).filter(([, v]) => v !== undefined) as [string, string][]);
    const basic = Buffer.from(`${encodeURIComponent(this.options.clientId ?? '')}:${encodeURIComponent(this.options.clientSecret ?? '')}`).toString('base64');
    const { data } = await this.call<TokenResponse>('POST', '/oauth/token', { form, auth: false, headers: { authorization: `Basic ${basic}` }, raw: true });
    return data;
  }

  private async renewToken(): Promise<HeldToken> {
    const held = this.token;
    let response: TokenResponse | null = null;
    if (held?.refreshToken) {
      try {
        response = await this.fetchToken({ grant_type: 'refresh_token', refresh_token: held.refreshToken, scope: this.options.scope });
      } catch (error) {
        // An expired, revoked or reused refresh token: fall back to a fresh grant below.
        if (!(error instanceof StockistError && error.isOAuthError && error.status < 500)) throw error;
      }
    }
    response ??= await this.fetchToken({ grant_type: 'client_credentials', scope: this.options.scope });
    this.token = { accessToken: response.access_token, refreshToken: response.refresh_token ?? null, expiresAt: Date.now() + response.expires_in * 1000 };
    return this.token;
  }

  // ---- transport -------------------------------------------------------------------------

  private retryDelay(attempt: number): number {
    const exp = this.retryBaseDelayMs * 2 ** attempt;
    return Math.min(this.maxRetryDelayMs, exp / 2 + Math.random() * (exp / 2));
  }

  private async call<T>(method: string, path: string, options: CallOptions = {}): Promise<{ data: T; response: Response }> {
    const url = new URL(this.base + path);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    let payload: string | Uint8Array<ArrayBuffer> | Blob | undefined;
    if (options.bytes) {
      headers['content-type'] = options.bytes.contentType;
      payload = options.bytes.data;
    } else if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = options.form.toString();
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(options.body);
    }
    if ((method === 'POST' || method === 'PUT') && options.auth !== false) headers['idempotency-key'] = options.idempotencyKey ?? randomUUID();

    let renewedAfter401 = false;
    for (let attempt = 0; ; attempt++) {
      let token: string | null = null;
      if (options.auth !== false) {
        token = await this.getAccessToken();
        headers.authorization = `Bearer ${token}`;
      }
      let response: Response;
      try {
        response = await this.fetchImpl(url, { ...this.options.fetchInit, method, headers, body: payload });
      } catch (error) {
        // No answer: safe to repeat (reads, and writes under the same Idempotency-Key).
        if (attempt < this.maxRetries) {
          await sleep(this.retryDelay(attempt));
          continue;
        }
        throw error;
      }
      if (response.ok || response.status === 304) {
        if (response.status === 304) return { data: undefined as T, response };
        if (options.binary) {
          const file: DownloadedFile = { contentType: response.headers.get('content-type') ?? '', bytes: new Uint8Array(await response.arrayBuffer()) };
          return { data: file as T, response };
        }
        const json = (await response.json()) as { data: T } & T;
        return { data: options.raw ? json : json.data, response };
      }
      // A token revoked or expired early: renew once (OAuth clients only) and try again.
      if (response.status === 401 && token && !this.options.accessToken && !renewedAfter401) {
        renewedAfter401 = true;
        if (this.token?.accessToken === token) this.token = { ...this.token, expiresAt: 0 };
        await response.body?.cancel();
        continue;
      }
      if ((response.status === 429 || response.status === 503) && attempt < this.maxRetries) {
        const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
        const delay = retryAfter === null ? this.retryDelay(attempt) : retryAfter * 1000;
        if (delay <= this.maxRetryDelayMs) {
          await response.body?.cancel();
          await sleep(delay);
          continue;
        }
      }
      throw await errorFromResponse(response);
    }
  }
}
