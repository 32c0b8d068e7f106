import { isUtf8 } from 'node:buffer';
import http from 'node:http';
import type { Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance, RouteOptions } from 'fastify';
import sjson from 'secure-json-parse';
import type { Config } from '../config.ts';
import { MAX_EVIDENCE_BYTES } from '../domain/claims.ts';
import { AppError, invalidJson, serviceUnavailable } from '../domain/errors.ts';
import { merchantRouteFor } from './merchant-routes.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The most JSON values a body of this route may hold (unset: no limit); see bodyLimitsFor. */
    maxJsonValues?: number;
  }
}

/**
 * What a JSON text breaks, found by one linear scan that stops as soon as it knows: nesting deeper
 * than `maxDepth`, or more than `maxValues` values. Values are counted by their structure outside
 * strings — each `{`, `[` and `,` — which is every object and array and every element after the
 * first, near enough to the number of values to bound what parsing the text would build. A body
 * nested a million levels deep, or a megabyte of `{},{},…`, is refused after `maxDepth` or
 * `maxValues` steps, before the parser (and the recursive validators and trimmers after it) ever
 * see it.
 */
export function jsonShapeProblem(text: string, maxDepth: number, maxValues = Number.POSITIVE_INFINITY): 'depth' | 'values' | null {
  let depth = 0;
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return 'depth';
      if (++values > maxValues) return 'values';
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c && ++values > maxValues) return 'values';
  }
  return null;
}

/** Whether a JSON text nests deeper than `limit` (jsonShapeProblem without a value limit). */
export function exceedsDepth(text: string, limit: number): boolean {
  return jsonShapeProblem(text, limit) === 'depth';
}

/**
 * Body limits by kind of route (SPEC §2.4: a merchant's requests are bounded in cost, not just in
 * count). Each is sized to the largest legitimate body of its routes, with room to spare, and never
 * above BODY_LIMIT_BYTES (which the operator API, the catalogue import above all, takes in full):
 * - `merchant`: orders, quotes, refunds — at most 100 lines with bounded fields; the largest
 *   legitimate order (every field at its maximum length in CJK characters, JSON-escaped as
 *   `\uXXXX` and pretty-printed) is 109 KB and about 720 values.
 * - `bulk`: webhook registrations, whose `skus` list holds up to 10,000 SKUs of 64 characters
 *   (723 KB pretty-printed, about 10,030 values).
 * - `token`: the OAuth token endpoint, which nobody needs to send more than a few hundred bytes,
 *   and which anyone may call without a token.
 * - `file`: a claim's evidence upload (SPEC §18: at most 5 MB), streamed to storage and never held
 *   in memory, so BODY_LIMIT_BYTES (a bound on what is parsed in memory) does not cap it; no JSON.
 */
export const BODY_LIMITS = {
  merchant: { bytes: 128 * 1024, values: 4096 },
  bulk: { bytes: 1024 * 1024, values: 16_384 },
  token: { bytes: 16 * 1024, values: 256 },
  file: { bytes: MAX_EVIDENCE_BYTES, values: 0 },
} as const;

export function bodyLimitsFor(kind: keyof typeof BODY_LIMITS, config: Config): { bodyLimit: number; maxJsonValues: number } {
  const limits = BODY_LIMITS[kind];
  const bodyLimit = kind === 'file' ? limits.bytes : Math.min(limits.bytes, config.bodyLimitBytes);
  return { bodyLimit, maxJsonValues: limits.values };
}

/**
 * An onRoute hook for the merchant API: each route gets the body limits of its line in
 * MERCHANT_ROUTES (`bulk` or the merchant default).
 */
export function merchantBodyLimits(config: Config) {
  return (route: RouteOptions) => {
    const method = Array.isArray(route.method) ? route.method[0] : route.method;
    const kind = merchantRouteFor(method, route.url ?? '')?.body ?? 'merchant';
    const { bodyLimit, maxJsonValues } = bodyLimitsFor(kind, config);
    route.bodyLimit ??= bodyLimit;
    route.config = { ...(route.config ?? {}), maxJsonValues } as typeof route.config;
  };
}

const tooManyValues = (limit: number) =>
  new AppError('too_large', 41301, `the body holds more than ${limit} JSON values (objects, arrays and their elements), more than this route ever needs`);

/**
 * Replaces Fastify's JSON parser with one that also refuses invalid UTF-8 and nesting deeper than
 * MAX_JSON_DEPTH (400/40001) and, on routes that set `maxJsonValues`, bodies holding more values
 * than that (413/41301) — all before parsing — keeping secure-json-parse's
 * `__proto__`/`constructor.prototype` refusal. Errors are AppErrors, so the envelope and the OAuth
 * endpoint map them as usual.
 */
export function installJsonParser(app: FastifyInstance, maxDepth: number) {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw: Buffer, done) => {
    if (raw.length === 0) return done(invalidJson('the body is empty'), undefined);
    if (!isUtf8(raw)) return done(invalidJson('the body is not valid UTF-8'), undefined);
    const text = raw.toString('utf8');
    const maxValues = request.routeOptions.config?.maxJsonValues;
    const problem = jsonShapeProblem(text, maxDepth, maxValues);
    if (problem === 'depth') return done(invalidJson(`nesting deeper than ${maxDepth} levels`), undefined);
    if (problem === 'values') return done(tooManyValues(maxValues ?? 0), undefined);
    try {
      done(null, sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      const message = error instanceof SyntaxError ? error.message : 'the body carries a forbidden __proto__ or constructor.prototype key';
      done(invalidJson(message), undefined);
    }
  });
}

const CLIENT_ERRORS: Record<string, { status: number; code: number; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 40800, message: 'the request was not received in time' },
  HPE_HEADER_OVERFLOW: { status: 431, code: 43100, message: 'the request headers are larger than the limit' },
};

/**
 * Errors Node raises before a request reaches Fastify (malformed HTTP, headers over
 * MAX_HEADER_BYTES, a request still arriving after REQUEST_TIMEOUT_MS): answered with the envelope
 * and the connection closed, instead of Fastify's own body shape.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const known = CLIENT_ERRORS[error.code ?? ''] ?? { status: 400, code: 40000, message: 'malformed HTTP request' };
  const body = JSON.stringify({ code: known.code, message: known.message, data: null });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${known.status} ${http.STATUS_CODES[known.status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Node's options for the HTTP(S) server behind Fastify that carry our limits. */
export function serverLimits(config: Config) {
  return {
    maxHeaderSize: config.maxHeaderBytes,
    // Given here too (Fastify sets requestTimeout after creating the server, which leaves
    // headersTimeout at Node's 60 s default and a slow body uncut): headers get the same deadline.
    requestTimeout: config.requestTimeoutMs,
    headersTimeout: Math.min(60_000, config.requestTimeoutMs),
    // Node checks request deadlines on this interval (30 s by default), so a short timeout needs a short interval.
    connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(config.requestTimeoutMs / 4))),
  };
}

const overloaded = (retryAfterSeconds: number) => serviceUnavailable(`the server is overloaded; retry after ${retryAfterSeconds} s`, retryAfterSeconds);

/**
 * Sheds load before any work: while the event loop lags more than OVERLOAD_MAX_EVENT_LOOP_DELAY_MS
 * (mean over the last OVERLOAD_SAMPLE_MS) or the heap is above OVERLOAD_MAX_HEAP_BYTES, requests are
 * answered 503/50300 with Retry-After at once instead of queueing behind the backlog. /healthz,
 * /readyz and /metrics keep answering so the orchestrator does not restart a process that is merely
 * busy. Sampling starts when the app is ready: the first interval must not measure start-up (route
 * compilation blocks the loop for a while), which made a fresh process refuse its first requests —
 * the reason this is not @fastify/under-pressure (docs/decisions.md).
 */
export function installOverloadShedding(app: FastifyInstance, config: Config) {
  const maxDelayMs = config.overloadMaxEventLoopDelayMs;
  const maxHeap = config.overloadMaxHeapBytes;
  if (maxDelayMs === 0 && maxHeap === 0) return;
  const resolutionMs = 10;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  let underPressure = false;
  let timer: NodeJS.Timeout | null = null;
  const sample = () => {
    const delayMs = histogram.count > 0 ? Math.max(0, histogram.mean / 1e6 - resolutionMs) : 0;
    histogram.reset();
    underPressure = (maxDelayMs > 0 && delayMs > maxDelayMs) || (maxHeap > 0 && process.memoryUsage().heapUsed > maxHeap);
  };
  app.addHook('onReady', async () => {
    histogram.enable();
    timer = setInterval(sample, config.overloadSampleMs);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    if (timer) clearInterval(timer);
    histogram.disable();
  });
  const exempt = new Set(['/healthz', '/readyz', '/metrics']);
  app.addHook('onRequest', async (request) => {
    if (underPressure && !exempt.has(request.url.split('?')[0])) throw overloaded(config.overloadRetryAfterSeconds);
  });
}
