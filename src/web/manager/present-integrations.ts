import type { StockistEnv } from '../../domain/vocabulary.ts';
import { MAX_ROTATION_GRACE_HOURS } from '../../domain/oauth.ts';
import { READ_SCOPES, SCOPES } from '../../domain/scopes.ts';
import { USAGE_DAYS } from '../../domain/usage.ts';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT, type WebhookEventType } from '../../domain/vocabulary.ts';
import { LOOPBACK_FAILURE } from '../../domain/webhook-url.ts';
import { STATUS_CODES } from 'node:http';
import { merchantRouteFor } from '../../http/merchant-routes.ts';
import { ERROR_CATALOGUE } from '../../http/openapi/error-catalogue.ts';
import type { BucketUse } from '../../http/rate-limit.ts';
import type { MerchantUsage } from '../../services/usage.service.ts';
import type { deliveryLog, listWebhooks } from '../../services/webhooks.service.ts';
import { codes, eventWords, moment, presentEditConflict, statusWords, type EditConflictView, type TableView } from '../shared/present.ts';
import type { Html, PageModel } from '../shared/views.ts';

/**
 * The presenters of the business manager's integration pages (issue 30, rule 3): Get started,
 * Usage, API credentials, and the webhook endpoints with their delivery log. Each turns a
 * service's answer into the typed model of its view (manager/views.ts): times become `<time>`
 * markup (`moment`), numbers the text the page shows, links and the environment's wording are
 * made here, so the templates only place them. Unit tests: test/unit/web-presenters-integrations.test.ts.
 */

const PREFIX = '/manager';
const WEBHOOKS = `${PREFIX}/webhooks`;

/** How this server's tokens start: `stk_live_` in production, `stk_test_` in the sandbox. */
const tokenPrefix = (environment: StockistEnv) => (environment === 'production' ? 'stk_live_' : 'stk_test_');

/** A checkbox of a form: its value, ticked or not. */
export interface Checkbox {
  value: string;
  checked: boolean;
}

// ---- views.overview: Get started.

/** What the Get started page is built from: the server's public origin and how it runs. */
export interface GetStartedInput {
  origin: string;
  environment: StockistEnv;
  /** TLS on the certificate the server made itself: curl needs `-k`, npm and Node its certificate. */
  selfSigned: boolean;
  /** The typed client's package file served at /sdk/, or null when the server was installed without it. */
  tarball: string | null;
  /** The file name of the certificate served at /sdk/ (self-signed servers). */
  certificate: string;
  /** The example's file name in the package. */
  example: string;
  /** The token made for this page, shown this once; null otherwise. */
  token: string | null;
  /** The user may make that token (not a viewer). */
  canCreate: boolean;
}

/** views.overview: the API's address, a curl that works as printed, and the typed client's commands. */
export interface GetStartedView extends PageModel {
  environment: string;
  tokenPrefix: string;
  /** `https://shop.example/openapi`: the merchant API's base URL. */
  baseUrl: string;
  docsUrl: string;
  openapiUrl: string;
  /** Says curl's `-k` accepts the server's own certificate. */
  selfSigned: boolean;
  /** What curl is given before its header: `-k ` on a self-signed certificate, else nothing. */
  curlFlags: string;
  /** The request the curl makes: `<base URL>/v1/product/products?pageSize=5`. */
  tryUrl: string;
  token: string | null;
  /** What the Get started token may do: the read scopes, `catalog:read, stock:read, …`. */
  tokenScopes: string;
  canCreate: boolean;
  /** The typed client's commands; null when the server has no package to install. */
  sdk: {
    /** One command a line, from an empty folder to the installed package. */
    install: string;
    /** Says `NODE_EXTRA_CA_CERTS` makes npm and Node trust the server's certificate. */
    trustCertificate: boolean;
    /** The example run with the token above (shown with it only). */
    runWithToken: string | null;
    /** The example run with an OAuth client's id and secret in the environment. */
    run: string;
    /** The example's path in the installed package. */
    example: string;
    /** Where the package and its example are listed (/sdk). */
    listing: string;
  } | null;
}

export function presentGetStarted(i: GetStartedInput): GetStartedView {
  const example = `node_modules/@stockist/client/examples/${i.example}`;
  const sdk = `${i.origin}/sdk`;
  return {
    title: 'Get started',
    environment: i.environment,
    tokenPrefix: tokenPrefix(i.environment),
    baseUrl: `${i.origin}/openapi`,
    docsUrl: `${i.origin}/docs`,
    openapiUrl: `${i.origin}/docs/openapi.json`,
    selfSigned: i.selfSigned,
    curlFlags: i.selfSigned ? '-k ' : '',
    tryUrl: `${i.origin}/openapi/v1/product/products?pageSize=5`,
    token: i.token,
    tokenScopes: READ_SCOPES.join(', '),
    canCreate: i.canCreate,
    sdk:
      i.tarball === null
        ? null
        : {
            install: [
              'mkdir stockist-example && cd stockist-example',
              ...(i.selfSigned
                ? [`curl -k -sS -o stockist-sandbox.pem ${sdk}/${i.certificate}`, 'export NODE_EXTRA_CA_CERTS="$PWD/stockist-sandbox.pem"']
                : []),
              `npm install ${sdk}/${i.tarball}`,
            ].join('\n'),
            trustCertificate: i.selfSigned,
            runWithToken: i.token === null ? null : `STOCKIST_URL=${i.origin} STOCKIST_TOKEN=${i.token} node ${example}`,
            run: `STOCKIST_URL=${i.origin} node ${example}`,
            example,
            listing: sdk,
          },
  };
}

// ---- views.usage.

/** The rate-limit buckets as merchantBucketUse (http/rate-limit.ts) reads them; null when they cannot be read. */
export type BudgetUse = { requests: BucketUse; body: BucketUse | null } | null;

/** A status class as the page names it, with its count. */
export interface ClassCount {
  /** `2xx`. */
  label: string;
  count: number;
}

/** views.usage: the merchant's requests per day, errors by code, the budget now and the newest 4xx. */
export interface UsageView extends PageModel {
  /** `production` or `sandbox`. */
  environment: string;
  windowDays: number;
  /** Null: the rate-limit store cannot be read. Figures as the page shows them (`45 of 50`). */
  budget: { requests: string; perSecond: string; body: string | null } | null;
  /** The window's totals by status class (2xx … 5xx). */
  totals: ClassCount[];
  /** The chart's series (assets/usage-chart.js reads them from a data attribute), as JSON. */
  chart: string;
  /** One row a UTC day, oldest first. */
  days: { day: string; counts: ClassCount[] }[];
  /** Error responses by code, most frequent first; `status` is the code's HTTP status (404 for 40400), `words` what the code means. */
  codes: { code: string; words: string; status: string; count: string; lastDay: string }[];
  /**
   * The newest 4xx answers, newest first: `request` says what was asked in words ("Read an order"),
   * `route` is its method and pattern for a developer (`GET /openapi/v2/order/orders/:id`), and
   * `words` what the error code means.
   */
  recent: { requestId: string; at: Html; request: string; route: string; status: string; code: string; words: string }[];
}

const CLASSES = [2, 3, 4, 5] as const;

/** Whole units left of a bucket and its size: `45 of 50`. */
const left = (b: BucketUse) => `${Math.floor(b.available)} of ${b.capacity}`;

const CODE_WORDS: ReadonlyMap<number, string> = new Map(ERROR_CATALOGUE.map((e) => [e.code, e.words]));

/**
 * An error code in words: the catalogue's (docs/errors.md), else the HTTP status's reason phrase
 * (`40500` → "Method Not Allowed": an unknown client error is counted as its status × 100).
 */
export const errorCodeWords = (code: number): string => CODE_WORDS.get(code) ?? STATUS_CODES[Math.floor(code / 100)] ?? `HTTP ${Math.floor(code / 100)}`;

/** What a request asked for, in words: its merchant route's (`Read an order`), else that no route of the API answers to it. */
export const requestWords = (method: string, route: string): string =>
  merchantRouteFor(method, route)?.what ?? (route === 'unmatched' ? 'An address the API does not have' : `${method} request`);

export function presentUsage(usage: MerchantUsage, budget: BudgetUse, environment: StockistEnv): UsageView {
  const counts = (byClass: Record<(typeof CLASSES)[number], number>) => CLASSES.map((c) => ({ label: `${c}xx`, count: byClass[c] }));
  const totals = { 2: 0, 3: 0, 4: 0, 5: 0 };
  for (const d of usage.days) for (const c of CLASSES) totals[c] += d.byClass[c];
  return {
    title: 'Usage',
    environment: environment === 'production' ? 'production' : 'sandbox',
    windowDays: USAGE_DAYS,
    budget: budget && {
      requests: left(budget.requests),
      perSecond: String(budget.requests.perSecond),
      body: budget.body && left(budget.body),
    },
    totals: counts(totals),
    chart: JSON.stringify({
      days: usage.days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000),
      ok: usage.days.map((d) => d.byClass[2]),
      redirect: usage.days.map((d) => d.byClass[3]),
      clientError: usage.days.map((d) => d.byClass[4]),
      serverError: usage.days.map((d) => d.byClass[5]),
    }),
    days: usage.days.map((d) => ({ day: d.day, counts: counts(d.byClass) })),
    codes: usage.byCode.map((c) => ({
      code: String(c.code),
      words: errorCodeWords(c.code),
      status: String(Math.floor(c.code / 100)),
      count: String(c.count),
      lastDay: c.lastDay,
    })),
    recent: usage.recent.map((r) => ({
      requestId: r.requestId,
      at: moment(r.at),
      request: requestWords(r.method, r.route),
      route: r.route === 'unmatched' ? r.method : `${r.method} ${r.route}`,
      status: String(r.status),
      code: String(r.code),
      words: errorCodeWords(r.code),
    })),
  };
}

// ---- views.credentials: OAuth clients and personal access tokens.

/** A new secret the page shows once (kept for it by the form that made it: a one-time display). */
export type ShownCredential =
  | { kind: 'client'; name: string; clientId: string; secret: string; oldSecretUntil?: number | null }
  | { kind: 'token'; name: string; secret: string; scopes: string };

/** A credentials form refused with its reason and what was typed; nothing was written. */
export type CredentialsRefusal =
  | { status: number; form: 'rotate'; error: string; typed: { clientId: string; graceHours: string | undefined } }
  | { status: number; form: 'token'; error: string; typed: { name: string; expiresInDays: string | undefined } };

/** An OAuth client as the store lists it. */
export interface ClientRecord {
  id: number;
  name: string;
  client_id: string;
  created_at: number;
  last_used_at: number | null;
  rotated_at: number | null;
  revoked_at: number | null;
}

/** A personal access token as the store lists it. */
export interface TokenRecord {
  id: number;
  name: string | null;
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
}

/** A client's row: its times, its state, and (while live) its rotate form, open with the reason when it was refused. */
export interface ClientRow {
  id: string;
  name: string;
  clientId: string;
  created: Html;
  lastUsed: Html;
  /** `revoked`, `active, rotated` or `active`, and when. */
  state: { text: string; at: Html | null };
  live: boolean;
  rotate: { open: boolean; graceHours: string; error: string | null };
}

export interface TokenRow {
  id: string;
  name: string;
  scopes: string;
  created: Html;
  lastUsed: Html;
  /** `never` for a token without an end. */
  expires: Html;
  state: string;
  live: boolean;
}

/** views.credentials. */
export interface CredentialsView extends PageModel {
  environment: string;
  tokenPrefix: string;
  /** The OAuth token endpoint's URL. */
  tokenUrl: string;
  /** `done` says what the form did ("Client Shop backend created"), before the secret to copy. */
  shown:
    | { kind: 'client'; done: string; name: string; clientId: string; secret: string; oldSecretUntil: Html | null }
    | { kind: 'token'; done: string; name: string; secret: string; scopes: string }
    | null;
  /** Not a viewer: the forms and actions. */
  canWrite: boolean;
  maxGraceHours: number;
  clients: ClientRow[];
  tokens: TokenRow[];
  /** The new-token form: what was typed into a refused one, else the read scopes ticked. */
  tokenForm: { name: string; expiresInDays: string; error: string | null; scopes: Checkbox[] };
}

export function presentCredentials(
  listed: { clients: readonly ClientRecord[]; tokens: readonly TokenRecord[] },
  {
    environment,
    tokenUrl,
    canWrite,
    shown,
    refused,
  }: { environment: StockistEnv; tokenUrl: string; canWrite: boolean; shown: ShownCredential | null; refused: CredentialsRefusal | null },
): CredentialsView {
  const tokenRefused = refused?.form === 'token' ? refused : null;
  return {
    title: 'API credentials',
    environment,
    tokenPrefix: tokenPrefix(environment),
    tokenUrl,
    shown:
      shown === null
        ? null
        : shown.kind === 'client'
          ? {
              ...shown,
              // A rotation carries when the old secret stops (null: at once); a new client carries nothing.
              done: shown.oldSecretUntil === undefined ? `Client ${shown.name} created` : `Secret of client ${shown.name} rotated`,
              oldSecretUntil: shown.oldSecretUntil ? moment(shown.oldSecretUntil) : null,
            }
          : { ...shown, done: `Token ${shown.name} created` },
    canWrite,
    maxGraceHours: MAX_ROTATION_GRACE_HOURS,
    clients: listed.clients.map((c) => {
      const rotateRefused = refused?.form === 'rotate' && refused.typed.clientId === String(c.id) ? refused : null;
      return {
        id: String(c.id),
        name: c.name,
        clientId: c.client_id,
        created: moment(c.created_at),
        lastUsed: moment(c.last_used_at),
        state:
          c.revoked_at !== null
            ? { text: 'Revoked', at: moment(c.revoked_at) }
            : c.rotated_at !== null
              ? { text: 'Active, rotated', at: moment(c.rotated_at) }
              : { text: 'Active', at: null },
        live: c.revoked_at === null,
        rotate: rotateRefused
          ? { open: true, graceHours: rotateRefused.typed.graceHours ?? '', error: rotateRefused.error }
          : { open: false, graceHours: '0', error: null },
      };
    }),
    tokens: listed.tokens.map((t) => ({
      id: String(t.id),
      name: t.name ?? '',
      scopes: t.scopes,
      created: moment(t.created_at),
      lastUsed: moment(t.last_used_at),
      expires: moment(t.expires_at, 'never'),
      state: t.revoked_at === null ? 'Active' : 'Revoked',
      live: t.revoked_at === null,
    })),
    tokenForm: {
      name: tokenRefused?.typed.name ?? '',
      expiresInDays: tokenRefused?.typed.expiresInDays ?? '',
      error: tokenRefused?.error ?? null,
      scopes: SCOPES.map((s) => ({ value: s, checked: !tokenRefused && READ_SCOPES.includes(s) })),
    },
  };
}

// ---- views.webhooks, views.webhook and views['webhook-log'].

/** The URL field's rule in this environment. */
const urlHint = (environment: StockistEnv) => (environment === 'production' ? 'https, a public address' : 'https, or http on this machine for local testing');

type Endpoint = Awaited<ReturnType<typeof listWebhooks>>['list'][number];

/** An endpoint's status and why it was disabled, if it was: `disabled: every delivery failed …`. */
const statusOf = (e: Endpoint) => (e.disabledReason ? `${statusWords(e.status)}: ${e.disabledReason}` : statusWords(e.status));

/** views.webhooks: the merchant's endpoints and the form that registers one. */
export interface WebhooksView extends PageModel {
  /** The endpoint just registered and its signing secret, shown this once. */
  shown: { id: string; secret: string } | null;
  endpoints: TableView;
  canWrite: boolean;
  urlHint: string;
  /** Every event a new endpoint may follow; all but stock.changed ticked. */
  events: Checkbox[];
}

export function presentWebhooks(
  endpoints: readonly Endpoint[],
  { environment, canWrite, shown }: { environment: StockistEnv; canWrite: boolean; shown: { id: string; secret: string } | null },
): WebhooksView {
  return {
    title: 'Webhooks',
    shown: shown && { id: shown.id, secret: shown.secret },
    endpoints: {
      label: { text: 'Webhook endpoints' },
      caption: null,
      columns: ['Endpoint', 'URL', 'Events', 'Status'],
      rows: endpoints.map((e) => ({
        data: { name: 'endpoint', value: e.id },
        cells: [{ href: `${WEBHOOKS}/${e.id}`, text: e.id }, e.url, { html: codes(e.events) }, statusOf(e)],
      })),
      empty: { text: 'No endpoints yet.' },
    },
    canWrite,
    urlHint: urlHint(environment),
    events: WEBHOOK_EVENT_TYPES.map((e) => ({ value: e, checked: e !== 'stock.changed' })),
  };
}

type DeliveryLog = Awaited<ReturnType<typeof deliveryLog>>;
type Delivery = DeliveryLog['list'][number];

/** What a delivery's detail says of the answer: not sent yet (and when it is due), or the last attempt's answer. */
export type DeliveryResponse =
  | { sent: false; due: Html | null }
  | {
      sent: true;
      /** The HTTP status, or `no answer`. */
      status: string;
      /** `120 ms`, or why nothing was timed. */
      time: string;
      error: string | null;
      /** The first 2 KB of the answer, or why there is none to show. */
      body: { text: string } | { none: string };
    };

/** One delivery of the log: its row and its expandable detail. */
export interface DeliveryRow {
  id: string;
  type: string;
  test: boolean;
  /** The code (data-status) and its words. */
  status: string;
  statusText: string;
  attempts: string;
  /** The last answer's status code (empty when none came) and error. */
  code: string;
  error: string | null;
  /** `120 ms`; null when the last attempt was not timed. */
  duration: string | null;
  lastAttempt: Html;
  /** The retry form's action. */
  retry: string;
  /** The detail's id: a new attempt gives it a new one, so htmx's preserved (open) detail gives way to the new content. */
  detailId: string;
  /** The `webhook-id` header, the same on every attempt. */
  webhookId: string;
  requestBody: string;
  response: DeliveryResponse;
}

/** views['webhook-log']: an endpoint's newest deliveries (the endpoint's page includes it; htmx refreshes it alone). */
export interface WebhookLogView extends PageModel {
  /** The fragment htmx polls. */
  refresh: string;
  total: number;
  /** `2 deliveries`, `51 deliveries (the newest 50 shown)`. */
  counts: string;
  canWrite: boolean;
  /** Columns of a row (the detail row spans them). */
  columns: number;
  deliveries: DeliveryRow[];
}

function responseOf(d: Delivery): DeliveryResponse {
  const loopbackFailure = d.lastError === LOOPBACK_FAILURE;
  return d.attempts === 0
    ? { sent: false, due: d.nextAttemptAt ? moment(d.nextAttemptAt) : null }
    : {
        sent: true,
        status: d.lastStatusCode === null ? 'no answer' : String(d.lastStatusCode),
        time: d.durationMs !== null ? `${d.durationMs} ms` : loopbackFailure ? 'not recorded (a loopback address)' : 'not sent (refused before sending)',
        error: d.lastError,
        body:
          d.responseBody === null
            ? {
                none:
                  d.lastStatusCode === null && !loopbackFailure
                    ? 'None: no answer came'
                    : 'Not kept: the receiver is not at a public address, so only whether it answered 2xx is recorded, never the answer',
              }
            : d.responseBody === ''
              ? { none: 'Empty' }
              : { text: d.responseBody },
      };
}

export function presentWebhookLog(log: DeliveryLog, canWrite: boolean): WebhookLogView {
  const id = log.endpoint.id;
  const shown = log.list.length;
  return {
    title: `Webhook ${id}: delivery log`,
    refresh: `${WEBHOOKS}/${id}/deliveries`,
    total: log.total,
    counts: `${log.total} deliver${log.total === 1 ? 'y' : 'ies'}${log.total > shown ? ` (the newest ${shown} shown)` : ''}`,
    canWrite,
    columns: canWrite ? 7 : 6,
    deliveries: log.list.map((d) => ({
      id: d.id,
      type: d.type,
      test: d.test,
      status: d.status,
      statusText: statusWords(d.status),
      attempts: String(d.attempts),
      code: d.lastStatusCode === null ? '' : String(d.lastStatusCode),
      error: d.lastError,
      duration: d.durationMs === null ? null : `${d.durationMs} ms`,
      lastAttempt: moment(d.lastAttemptAt),
      retry: `${WEBHOOKS}/${id}/deliveries/${d.id}/retry`,
      detailId: `delivery-${d.id}-${d.attempts}`,
      webhookId: d.webhookId,
      requestBody: d.requestBody,
      response: responseOf(d),
    })),
  };
}

/** What the edit form shows: the endpoint's subscription, or what was typed into a refused form. */
export interface WebhookEditFields {
  url: string;
  events: readonly string[];
  skuList: string;
  /** The settings version the form was read at. */
  version: string;
}

/** views.webhook: one endpoint, its edit, test, rotate and delete forms, and its delivery log. */
export interface WebhookView extends PageModel {
  id: string;
  back: string;
  /** The new signing secret after a rotation, shown this once. */
  shown: string | null;
  url: string;
  events: string;
  /** `every SKU`, `2 SKUs: C, D` (the first 20); null when the endpoint does not follow stock.changed. */
  skus: string | null;
  status: string;
  created: Html;
  changed: Html;
  canWrite: boolean;
  /** The endpoint's page: the edit form posts to it, the other forms under it. */
  path: string;
  edit: { urlHint: string; url: string; events: Checkbox[]; skuList: string; reasons: readonly string[]; version: string };
  /** The test events that can be sent now: the ping first, then each event type the merchant has a record for. */
  testTypes: { value: string; label: string }[];
  /** The event types that cannot be tested yet, and why: `refund.failed: no refund yet`. */
  testUnavailable: string[];
  /** A test event refused (the type chosen had no record meanwhile): why, shown by the test form. */
  testRefused: string | null;
  log: WebhookLogView;
}

/** How many of the followed SKUs the page lists. */
const SKUS_LISTED = 20;

const skusText = (skus: readonly string[] | null) =>
  skus === null
    ? 'every SKU'
    : `${skus.length} SKU${skus.length === 1 ? '' : 's'}: ${skus.slice(0, SKUS_LISTED).join(', ')}${skus.length > SKUS_LISTED ? ' …' : ''}`;

export function presentWebhook(
  log: DeliveryLog,
  {
    environment,
    canWrite,
    shown,
    refused,
    testGaps = null,
    testRefused = null,
  }: {
    environment: StockistEnv;
    canWrite: boolean;
    shown: string | null;
    refused: { reasons: readonly string[]; form: WebhookEditFields } | null;
    /** Per event type, why a test of it cannot be sent yet (null: it can); null: every type offered. */
    testGaps?: Readonly<Record<WebhookEventType, string | null>> | null;
    testRefused?: string | null;
  },
): WebhookView {
  const e = log.endpoint;
  const form = refused?.form ?? { url: e.url, events: e.events, skuList: (e.skus ?? []).join('\n'), version: String(log.version) };
  return {
    title: `Webhook ${e.id}`,
    id: e.id,
    back: WEBHOOKS,
    shown,
    url: e.url,
    events: e.events.join(', '),
    skus: e.events.includes('stock.changed') ? skusText(e.skus) : null,
    status: statusOf(e),
    created: moment(e.createdAt),
    changed: moment(e.updatedAt),
    canWrite,
    path: `${WEBHOOKS}/${e.id}`,
    edit: {
      urlHint: urlHint(environment),
      url: form.url,
      events: WEBHOOK_EVENT_TYPES.map((t) => ({ value: t, checked: form.events.includes(t) })),
      skuList: form.skuList,
      reasons: refused?.reasons ?? [],
      version: form.version,
    },
    testTypes: [
      { value: WEBHOOK_TEST_EVENT, label: `${eventWords(WEBHOOK_TEST_EVENT)} (a ping)` },
      ...WEBHOOK_EVENT_TYPES.filter((t) => !testGaps?.[t]).map((t) => ({ value: t, label: eventWords(t) })),
    ],
    testUnavailable: WEBHOOK_EVENT_TYPES.filter((t) => testGaps?.[t]).map((t) => `${eventWords(t)}: ${testGaps![t]}`),
    testRefused,
    log: presentWebhookLog(log, canWrite),
  };
}

/**
 * The endpoint's edit form sent against an older settings version, beside the endpoint as stored
 * now (docs/web.md, "Edit conflicts").
 */
export function presentWebhookConflict(
  sent: WebhookEditFields,
  stored: { id: string; url: string; events: readonly string[]; skus: readonly string[] | null },
  storedVersion: number,
): EditConflictView {
  const path = `${WEBHOOKS}/${stored.id}`;
  return presentEditConflict({
    what: `Webhook endpoint ${stored.id}`,
    action: path,
    discard: { href: path, text: 'Discard mine and see the stored endpoint' },
    storedVersion,
    fields: [
      { name: 'url', label: 'URL', yours: sent.url, stored: stored.url },
      { name: 'events', label: 'Events', yours: sent.events, stored: stored.events, compare: 'set' },
      { name: 'skuList', label: 'stock.changed SKUs', yours: sent.skuList, stored: (stored.skus ?? []).join('\n'), compare: 'set' },
    ],
  });
}
