import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { trustsProxy, type Config } from '../config.ts';
import { AppError, forbidden, notFound, unauthorized } from '../domain/errors.ts';
import { FORM_KEY_PATTERN, FormAlreadySent, type FormKey } from '../domain/form-keys.ts';
import { hashSecret, randomToken, secretsEqual } from '../domain/secrets.ts';
import { emailFingerprint, emailKey, SIGN_IN_LIMITS } from '../domain/staff.ts';
import { httpHeaders, toAppError } from '../http/errors.ts';
import type { BucketStore } from '../http/rate-limit.ts';
import { formKeyUsed, forgetKeptForm, KEPT_FORM_TTL_MS, keepFlash, keepForm, keptForm, popFlash, rememberFormResult } from '../services/web-forms.service.ts';
import type { Db } from '../store/db.ts';
import { webResource } from './resources.ts';
import { passwordChangedNotice } from './shared/present.ts';
import type { Chrome, ErrorView, Frame, Notice, PageRenderer, ViewRegistry } from './shared/views.ts';
import { installFormBodyParser } from './form-body.ts';
import { fillForm, type KeptFields, keptFields } from './kept-forms.ts';
import { installPageSecurityHeaders, PAGE_SECURITY_HEADERS } from '../http/page-headers.ts';

/**
 * What the web front ends share (SPEC §14): the session cookie, the same-origin check on every
 * state-changing request, the security headers of every page, and errors as pages rather than
 * JSON. The design is in docs/decisions.md, "Console sessions and CSRF".
 */

/** The client reached us over HTTPS: TLS here, or (behind TRUST_PROXY) the proxy says so. */
export const isSecure = (config: Config, request: FastifyRequest) =>
  config.tls || (trustsProxy(config.trustProxy) && request.protocol?.toLowerCase() === 'https');

/**
 * Under HTTPS the cookie is `__Host-…`: the browser then only accepts it Secure, for Path=/ and
 * without Domain, so no sibling subdomain or plain-HTTP page can plant or overwrite it.
 */
export const cookieName = (base: string, secure: boolean) => (secure ? `__Host-${base}` : base);

function readCookie(request: FastifyRequest, name: string): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9]{1,128}$/.test(value) ? value : null;
    }
  }
  return null;
}

export function setSessionCookie(reply: FastifyReply, name: string, value: string, secure: boolean, maxAgeSeconds: number) {
  reply.header('Set-Cookie', `${name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`);
}

export function clearSessionCookie(reply: FastifyReply, name: string, secure: boolean) {
  reply.header('Set-Cookie', `${name}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`);
}

/**
 * A state-changing request must come from our own pages: the browser's `Origin` (or, where an old
 * browser sends none, `Referer`) must be this server's origin, and `Sec-Fetch-Site` must not say
 * cross-site. A request with neither header is refused: browsers send Origin on every POST.
 */
function sameOriginProblem(request: FastifyRequest, secure: boolean): string | null {
  const fetchSite = request.headers['sec-fetch-site'];
  if (fetchSite === 'cross-site' || fetchSite === 'same-site') return `Sec-Fetch-Site is ${fetchSite}`;
  // request.host: the Host header, or behind TRUST_PROXY the proxy's X-Forwarded-Host (the name the browser used).
  const expected = `${secure ? 'https' : 'http'}://${request.host ?? ''}`.toLowerCase();
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== 'null') return origin.toLowerCase() === expected ? null : `Origin ${origin} is not ${expected}`;
  const referer = request.headers.referer;
  if (typeof referer === 'string') {
    try {
      return new URL(referer).origin.toLowerCase() === expected ? null : `Referer is not from ${expected}`;
    } catch {
      return 'Referer is not a URL';
    }
  }
  return 'neither Origin nor Referer was sent';
}

/** The security headers of every page (http/page-headers.ts, shared with /sdk); pages are never cached. */
function installPageHeaders(app: FastifyInstance) {
  installPageSecurityHeaders(app);
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.url.includes('/assets/')) reply.header('Cache-Control', 'no-store');
    return payload;
  });
}

export type ErrorPage = (reply: FastifyReply, status: number, message: string) => FastifyReply | Promise<FastifyReply>;

/**
 * A refused form answered on the page the form is on (what `installWebFrontEnd` gives): that page
 * rendered again at `status` with `message` in its status region, or null when there is no such
 * page to show (then the error page).
 */
export type FormRefusal = (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => Promise<FastifyReply | null>;

/** Refusals a form post is answered with on its own page: the request's input or the state, not who sent it or how. */
const REFUSED_IN_PLACE = new Set<AppError['kind']>(['invalid', 'not_found', 'conflict', 'unprocessable', 'rate_limited', 'too_large']);

/** Failures inside a web front end are pages with the right status, not the API's JSON envelope. */
function installHtmlErrors(
  app: FastifyInstance,
  page: ErrorPage,
  resent: (request: FastifyRequest, reply: FastifyReply, resultPath: string | null) => Promise<FastifyReply>,
  refusedInPlace: FormRefusal,
) {
  app.setErrorHandler(async (thrown: FastifyError, request, reply) => {
    if (thrown instanceof FormAlreadySent) return resent(request, reply, thrown.resultPath);
    // The API's mapping (toAppError), in a person's words where the API's would be a developer's.
    const { error, status, cause } = toAppError(thrown, request);
    const headers = httpHeaders(error);
    if (headers) reply.headers(headers);
    if (cause === 'storage') return page(reply, status, 'Storage is unavailable; try again shortly.');
    if (cause === 'unexpected') return page(reply, status, `Something went wrong on our side; quote request ${request.id} when reporting it.`);
    const message =
      cause === 'validation'
        ? `The form was not filled in as expected (${thrown.message}).`
        : cause === 'framework'
          ? thrown.message
          : `${error.message}${error.errors?.length ? `: ${error.errors.map((e) => `${e.field} ${e.message}`).join('; ')}` : ''}`;
    if (cause === 'validation' || (cause === 'app' && REFUSED_IN_PLACE.has(error.kind))) {
      const again = await refusedInPlace(request, reply, status, `Not done: ${message}`);
      if (again) return again;
    }
    return page(reply, status, message);
  });
  app.setNotFoundHandler((request, reply) => page(reply, 404, `There is no page at ${request.url.split('?')[0]}.`));
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Failures Fastify meets before routing (a URL that does not decode, a path parameter over the
 * limit) under a web front end's prefix: a plain page too, as no template engine is reached yet.
 */
export function webFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
  const message = status === 414 ? 'A part of the address is longer than the limit.' : 'The address is malformed.';
  return reply
    .code(status)
    .header('X-Request-Id', request.id)
    .headers(PAGE_SECURITY_HEADERS)
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Error ${status}</title></head><body><main><h1>Error ${status}</h1><p>${escapeHtml(message)}</p></main></body></html>\n`,
    );
}

// ---- What both front ends (console, business manager) are built from: route tables, the session,
// ---- CSRF and permission hooks, the page renderer, assets, and sign-in limiting.

/** A route of a front end's table: the permission (or a front end's own gate word) it needs. */
export interface WebRoute<P extends string> {
  method: 'GET' | 'POST';
  /** Relative to the front end's prefix, Fastify syntax. */
  path: string;
  permission: P | 'public';
  /**
   * The form applies once (issue 29): a POST must carry the rendered form's `_formKey`, and a
   * second submission of the same key applies nothing and answers 303 to the first one's page.
   */
  once?: true;
  /**
   * What else the POST's body may be besides a urlencoded form: `multipart` — a form with files
   * (`multipart/form-data`; its fields become the body, its files `forms.files(request)`);
   * `file` — one raw file of a type the route's plugin parses itself, the CSRF token in the
   * `X-CSRF-Token` header (a script's upload). The same-origin check runs on both.
   */
  body?: 'multipart' | 'file';
}

const routeShape = (path: string) => path.replace(/:[^/]+/g, ':').replace(/\/+$/, '');

/** Finds a registered route's table entry (`url` with the prefix); HEAD answers to the GET's entry. */
export function routeLookup<R extends WebRoute<string>>(prefix: string, routes: readonly R[]) {
  const byShape = new Map(routes.map((r) => [`${r.method} ${routeShape(r.path)}`, r]));
  return (method: string, url: string): R | undefined => {
    const path = url.startsWith(prefix) ? url.slice(prefix.length) : url;
    const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
    return byShape.get(`${m} ${routeShape(path)}`);
  };
}

export type { Notice, PageRenderer } from './shared/views.ts';

/** What a front end's session must give: the CSRF secret, and the session's key (SHA-256 of its id). */
interface WebSession {
  csrfSecret: string;
  sessionHash: string;
}

export interface WebFrontEnd<User extends WebSession, V extends { error: ErrorView }> {
  /** For messages: "console", "business manager". */
  name: string;
  /** Its views: name → template and model type (shared/views.ts). Templates are under src/web (or dist/web). */
  views: ViewRegistry<V>;
  /** Files under /assets/ (nothing else is served, nothing from a CDN). */
  assets: Record<string, { file: string; type: string }>;
  cookie: string;
  signInPath: string;
  /** The front end's first page (`/console`): where a resubmitted form goes when nothing better is known. */
  home: string;
  /** Form keys and one-time displays are kept here (the services open a transaction for each write). */
  db: Db;
  now(): number;
  /** The route table's entry for a registered route; a route without one is refused at registration. */
  routeFor(method: string, url: string): WebRoute<string> | undefined;
  tableName: string;
  resume(sessionId: string, request: FastifyRequest): Promise<User | null>;
  getUser(request: FastifyRequest): User | null;
  setUser(request: FastifyRequest, user: User): void;
  /**
   * Where a signed-in user must go first instead (a second factor still due, say), or null. A GET
   * is redirected there; anything else refused with 403 and this reason.
   */
  detour?(user: User, permission: string): { to: string; reason: string } | null;
  /** Why the user may not do what `permission` names, or null when they may. */
  refusal(user: User, permission: string): string | null;
  /** The layout's parts of this front end for this user and page (shared/partials/layout.eta). */
  chrome(user: User | null, request: FastifyRequest): Chrome;
  /** The largest `multipart/form-data` body a `body: 'multipart'` route takes (bytes); without it, none. */
  multipartLimit?: number;
}

/** The `body` of the request's route-table entry (WebRoute), if any. */
const routeBody = (request: FastifyRequest) => (request.routeOptions.config as { body?: WebRoute<string>['body'] } | undefined)?.body;

const isFormBody = (request: FastifyRequest) => {
  const type = request.headers['content-type'];
  const hasBody = request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] ?? '0') !== '0';
  if (!hasBody) return true;
  if (typeof type !== 'string') return false;
  if (/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) return true;
  const body = routeBody(request);
  // A form with files, or a script's raw upload: only where the route table says the route takes one.
  if (body === 'multipart') return /^multipart\/form-data\s*;/i.test(type);
  return body === 'file';
};

/** A file of a `multipart/form-data` form: its field's name and the file (held in memory, at most the front end's `multipartLimit`). */
export interface FormFile {
  field: string;
  file: File;
}

/**
 * Installs a server-rendered front end on `app` (an encapsulated plugin under the front end's
 * prefix): the route table (each route's permission in its config), form bodies, Eta views,
 * security headers, errors as pages, the same-origin check and session lookup on every request,
 * then (after the body is parsed, before the schema) the session, detour, permission and CSRF
 * checks. Returns the page renderer and `signedIn`, the user of a request on a route that is not
 * public. Design: docs/decisions.md, "Console sessions and CSRF".
 */
export async function installWebFrontEnd<User extends WebSession, V extends { error: ErrorView }>(
  app: FastifyInstance,
  config: Config,
  fe: WebFrontEnd<User, V>,
): Promise<{ page: PageRenderer<V>; signedIn(request: FastifyRequest): User; forms: WebForms }> {
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      const entry = fe.routeFor(method, route.url ?? '');
      if (!entry) throw new Error(`${fe.name} route ${method} ${route.url} is not in ${fe.tableName}`);
      route.config = {
        ...(route.config ?? {}),
        permission: entry.permission,
        once: entry.once === true,
        body: entry.body,
        envelope: false,
      } as typeof route.config;
    }
  });
  installFormBodyParser(app);
  const formFiles = new WeakMap<FastifyRequest, FormFile[]>();
  if (fe.multipartLimit !== undefined) {
    const limit = fe.multipartLimit;
    // Parsed only for a signed-in user on a route that takes it (the same-origin check has run): the
    // fields become the body (the CSRF token and the one-time key are checked from it as from any
    // form), the files wait for the route, which stores them only after those checks.
    app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: limit }, (request, raw, done) => {
      if (routeBody(request) !== 'multipart')
        return done(new AppError('unsupported_format', 41500, `${fe.name} forms are sent as application/x-www-form-urlencoded`), undefined);
      if (!fe.getUser(request)) return done(unauthorized('your session has ended; sign in again'), undefined);
      new Response(new Uint8Array(raw as Buffer), { headers: { 'content-type': String(request.headers['content-type']) } })
        .formData()
        .then((data) => {
          const fields: Record<string, string | string[]> = {};
          const files: FormFile[] = [];
          for (const [name, value] of data) {
            if (typeof value !== 'string') {
              // An empty file input sends a part with no name and no bytes: no file.
              if (value.size > 0 || value.name !== '') files.push({ field: name, file: value });
              continue;
            }
            const had = fields[name];
            fields[name] = had === undefined ? value : [had, value].flat();
          }
          formFiles.set(request, files);
          done(null, fields);
        })
        .catch(() => done(new AppError('invalid', 40000, 'The form could not be read: its multipart body is malformed.'), undefined));
    });
  }
  await app.register(fastifyView, { engine: { eta: new Eta({ autoEscape: true, cache: true }) }, root: webResource(), production: true });
  installPageHeaders(app);

  const sessionIds = new WeakMap<FastifyRequest, string>();
  const formKeys = new WeakMap<FastifyRequest, FormKey>();
  const forms: WebForms = {
    formKey: (request) => formKeys.get(request),
    files: (request) => formFiles.get(request) ?? [],
    async flash(request, slot, data) {
      const user = fe.getUser(request);
      const sessionId = sessionIds.get(request);
      if (!user || !sessionId) return;
      await keepFlash(fe.db, user.sessionHash, slot, seal(flashKey(sessionId), data), fe.now());
    },
    async flashToNewSession(sessionId, slot, data) {
      await keepFlash(fe.db, hashSecret(sessionId), slot, seal(flashKey(sessionId), data), fe.now());
    },
    async take<T>(request: FastifyRequest, slot: string) {
      const user = fe.getUser(request);
      const sessionId = sessionIds.get(request);
      if (!user || !sessionId) return null;
      const sealed = await popFlash(fe.db, user.sessionHash, slot, fe.now());
      return sealed === null ? null : (openSealed(flashKey(sessionId), sealed) as T | null);
    },
    async keptPage(request) {
      const handle = readCookie(request, keptCookie(request));
      const kept = handle ? await keptForm(fe.db, hashSecret(handle), fe.now()) : null;
      return kept?.page ?? null;
    },
  };

  // ---- A form sent after its session ended (Front ends III, 3; docs/decisions.md, "A form
  // ---- survives the session's end"): kept, and filled back in once its user signed in again.
  const keptCookie = (request: FastifyRequest) => cookieName(`${fe.cookie}_form`, isSecure(config, request));

  /** Keeps what a signed-out POST sent (secrets left out) under a new handle the browser gets in a cookie. */
  async function keepSentForm(request: FastifyRequest, reply: FastifyReply, body: Record<string, unknown>): Promise<void> {
    const handle = randomToken(32);
    const page = formPage(request, fe.home);
    await keepForm(fe.db, { handleHash: hashSecret(handle), page, action: request.url, sealed: seal(keptKey(handle), keptFields(body)) }, fe.now());
    const secure = isSecure(config, request);
    reply.header(
      'Set-Cookie',
      `${keptCookie(request)}=${handle}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${KEPT_FORM_TTL_MS / 1000}${secure ? '; Secure' : ''}`,
    );
  }

  /**
   * The browser's kept form, taken (deleted, its cookie cleared) when this GET is of the page it was
   * sent from; null otherwise (it waits for that page, or its time runs out).
   */
  async function takeKeptForm(request: FastifyRequest, reply: FastifyReply): Promise<{ action: string; fields: KeptFields } | null> {
    const handle = readCookie(request, keptCookie(request));
    if (!handle) return null;
    const handleHash = hashSecret(handle);
    const kept = await keptForm(fe.db, handleHash, fe.now());
    if (!kept || kept.page !== request.url) return null;
    // Two tabs opening the page at once: one of them fills the form.
    if (!(await forgetKeptForm(fe.db, handleHash))) return null;
    const secure = isSecure(config, request);
    reply.header('Set-Cookie', `${keptCookie(request)}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`);
    const fields = openSealed(keptKey(handle), kept.sealed) as KeptFields | null;
    return fields ? { action: kept.action, fields } : null;
  }

  /**
   * Refusals waiting for the page that shows them (`refusedInPlace`): a one-time random name →
   * the notice, named by a header of the internal GET only this process makes, so no client can
   * put text of its choosing on a page.
   */
  const refusals = new Map<string, Notice>();

  const page: PageRenderer<V> = async (reply, status, view, model) => {
    const request = reply.request;
    const user = fe.getUser(request);
    const named = request.headers[REFUSAL_HEADER];
    const refusal = typeof named === 'string' ? refusals.get(named) : undefined;
    // A refusal shown now leaves any one-time notice waiting for the next page.
    const kept = user && request.method === 'GET' && refusal === undefined ? await takeKeptForm(request, reply) : null;
    const notice = kept ? KEPT_FILLED : (refusal ?? (user && request.method === 'GET' ? await forms.take<Notice>(request, 'notice') : null));
    const frame: Frame = { chrome: fe.chrome(user, request), csrf: user?.csrfSecret ?? null, formKey: randomToken(24), notice };
    // A view reads its model and the frame, nothing else (issue 30, rule 3).
    if (!kept)
      return reply
        .code(status)
        .type('text/html; charset=utf-8')
        .view(fe.views[view].template, { ...frame, ...model });
    const rendered = fillForm(await reply.viewAsync(fe.views[view].template, { ...frame, ...model }), kept.action, kept.fields);
    const html = rendered.filled ? rendered.html : await reply.viewAsync(fe.views[view].template, { ...frame, notice: KEPT_NOT_FILLED, ...model });
    return reply.code(status).type('text/html; charset=utf-8').send(html);
  };

  /** A form sent again: nothing more was applied; back to the page the first submission led to. */
  const resent = async (request: FastifyRequest, reply: FastifyReply, resultPath: string | null) => {
    await forms.flash(request, 'notice', { text: 'That form was sent already: it took effect once, nothing more was changed.' });
    return reply.redirect(resultPath ?? formPage(request, fe.home), 303);
  };
  const errorPage = (reply: FastifyReply, status: number, message: string) => page(reply, status, 'error', { title: `Error ${status}`, message } as V['error']);
  /**
   * A form post refused for its input or the state (not for who sent it): the page the form is on
   * (its Referer on this front end, else the nearest page above the form's address, else the home
   * page) rendered again by an internal GET with this session, the reason in its status region, at
   * the refusal's status. Nothing is written for it. htmx posts keep their error answer (web.js
   * shows it in place); where no page renders (the form's page is gone too), the error page.
   */
  const refusedInPlace: FormRefusal = async (request, reply, status, message) => {
    if (request.method !== 'POST' || request.headers['hx-request'] === 'true') return null;
    for (const url of formPages(request, fe.home)) {
      const shown = await shownWith(request, url, { text: message, kind: 'error' });
      if (shown !== null) return reply.code(status).type('text/html; charset=utf-8').send(shown);
    }
    return null;
  };
  /**
   * The page at `url` as this request's session sees it, with `notice` in its status region, by an
   * internal GET; null unless it is a page of the front end (not a fragment, a file or a redirect).
   */
  const shownWith = async (request: FastifyRequest, url: string, notice: Notice): Promise<string | null> => {
    const name = randomToken(24);
    refusals.set(name, notice);
    try {
      const forwarded = Object.fromEntries(
        ['host', 'cookie', 'user-agent', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'].flatMap((h) => {
          const v = request.headers[h];
          return typeof v === 'string' ? [[h, v]] : [];
        }),
      );
      const shown = await app.inject({
        method: 'GET',
        url,
        remoteAddress: request.socket?.remoteAddress ?? request.ip,
        headers: { ...forwarded, [REFUSAL_HEADER]: name },
      });
      return shown.statusCode === 200 && /^text\/html/.test(String(shown.headers['content-type'])) && shown.body.includes('<main') ? shown.body : null;
    } finally {
      refusals.delete(name);
    }
  };
  installHtmlErrors(app, errorPage, resent, refusedInPlace);

  app.addHook('onRequest', async (request) => {
    const secure = isSecure(config, request);
    if (request.method === 'POST') {
      // Before the body is read or the session looked up: a cross-site form post goes no further.
      const problem = sameOriginProblem(request, secure);
      if (problem) throw forbidden(`refused: this request did not come from a ${fe.name} page (${problem})`);
      if (!isFormBody(request)) throw new AppError('unsupported_format', 41500, `${fe.name} forms are sent as application/x-www-form-urlencoded`);
    }
    const sessionId = readCookie(request, cookieName(fe.cookie, secure));
    const user = sessionId ? await fe.resume(sessionId, request) : null;
    if (user && sessionId) {
      fe.setUser(request, user);
      sessionIds.set(request, sessionId);
    }
  });

  // After parsing (the form's token is in the body), before the schema: who may do this, and is it really them.
  app.addHook('preValidation', async (request, reply) => {
    // The one-time key is the form's, not the route's payload: taken out here, carried by the actor.
    const body = request.body as Record<string, unknown> | undefined;
    const key = body?._formKey;
    if (body && typeof body === 'object' && '_formKey' in body) delete body._formKey;
    const permission = (request.routeOptions.config as { permission?: string } | undefined)?.permission;
    if (permission === undefined || permission === 'public') return;
    const user = fe.getUser(request);
    const isRead = request.method === 'GET' || request.method === 'HEAD';
    if (!user) {
      if (isRead) return reply.redirect(fe.signInPath, 303);
      reply.header('HX-Redirect', fe.signInPath);
      // A form (not htmx's in-place post, which web.js sends to the sign-in page): kept, and the
      // sign-in page shown saying so, still 401 — signing in leads back to the form, filled in.
      // Only from a browser that had a session here (its cookie outlives the session server-side).
      const hadSession = readCookie(request, cookieName(fe.cookie, isSecure(config, request))) !== null;
      if (hadSession && request.method === 'POST' && request.headers['hx-request'] !== 'true' && body && typeof body === 'object') {
        await keepSentForm(request, reply, body);
        const signIn = await shownWith(request, fe.signInPath, KEPT_SIGN_IN);
        if (signIn !== null) return reply.code(401).type('text/html; charset=utf-8').send(signIn);
      }
      throw unauthorized('your session has ended; sign in again');
    }
    const detour = fe.detour?.(user, permission);
    if (detour) {
      if (isRead) return reply.redirect(detour.to, 303);
      throw forbidden(detour.reason);
    }
    const refusal = fe.refusal(user, permission);
    if (refusal) throw forbidden(refusal);
    if (request.method === 'POST') {
      const sent = (request.body as { _csrf?: unknown } | undefined)?._csrf ?? request.headers['x-csrf-token'];
      if (typeof sent !== 'string' || !secretsEqual(sent, user.csrfSecret))
        throw forbidden('refused: the form’s security token is missing or out of date; reload the page and try again');
      const once = (request.routeOptions.config as { once?: boolean } | undefined)?.once === true;
      if (typeof key === 'string' && new RegExp(FORM_KEY_PATTERN).test(key)) {
        const formKey = { key, sessionHash: user.sessionHash };
        const used = await formKeyUsed(fe.db, formKey);
        if (used) return resent(request, reply, used.resultPath);
        formKeys.set(request, formKey);
      } else if (once) throw new AppError('invalid', 40000, 'this form has no valid one-time key; reload the page and send it again');
    }
  });

  // Where the answer to a once-only form sent the browser: a resubmission of it goes there too.
  app.addHook('onSend', async (request, reply, payload) => {
    const formKey = formKeys.get(request);
    const location = reply.getHeader('location');
    if (formKey && reply.statusCode === 303 && typeof location === 'string') await rememberFormResult(fe.db, formKey, request.id, location, fe.now());
    return payload;
  });

  const assetCache = new Map<string, Buffer>();
  app.get('/assets/:file', { schema: { params: Type.Object({ file: Type.String({ maxLength: 64 }) }) } }, async (request, reply) => {
    const { file } = request.params as { file: string };
    const asset = Object.hasOwn(fe.assets, file) ? fe.assets[file] : undefined;
    if (!asset) throw notFound(`asset ${file}`);
    let content = assetCache.get(file);
    if (!content) assetCache.set(file, (content = await fs.readFile(asset.file)));
    return reply.type(asset.type).header('Cache-Control', 'public, max-age=3600').send(content);
  });
  const signedIn = (request: FastifyRequest) => {
    // The preValidation hook has refused every request without a session on a route that is not public.
    const user = fe.getUser(request);
    if (!user) throw unauthorized('your session has ended; sign in again');
    return user;
  };
  return { page, signedIn, forms };
}

/** Form keys and one-time displays of a front end (docs/decisions.md, "Form posts"). */
export interface WebForms {
  /** The fresh one-time key a POST carried (for the actor of its write), if any. */
  formKey(request: FastifyRequest): FormKey | undefined;
  /** The files of a `multipart/form-data` form (a `body: 'multipart'` route), in the form's order; none for any other body. */
  files(request: FastifyRequest): FormFile[];
  /**
   * Keeps `data` for the session's next page, read once by `take(slot)` (`notice`: any page's
   * message). Sealed with a key from the session's cookie, which the database does not hold: a
   * new secret waiting here cannot be read from a copy of the database.
   */
  flash(request: FastifyRequest, slot: string, data: unknown): Promise<void>;
  /**
   * The same, for a session this request has just started (its cookie goes out with the answer,
   * so the request has none yet): an accepted invitation's welcome on the page it leads to.
   */
  flashToNewSession(sessionId: string, slot: string, data: unknown): Promise<void>;
  take<T>(request: FastifyRequest, slot: string): Promise<T | null>;
  /**
   * Where signing in should lead: the page of a form this browser sent after its session ended
   * (kept for KEPT_FORM_TTL_MS), or null. The sign-in handlers redirect there instead of home.
   */
  keptPage(request: FastifyRequest): Promise<string | null>;
}

/** The sign-in page's notice after a form was sent signed out. */
const KEPT_SIGN_IN: Notice = {
  text: 'Your session had ended, so that form was not sent and nothing was changed. Sign in again to go back to it, filled in as you left it (passwords and codes are not kept).',
};
/** The form's page after signing in again, its form filled in. */
const KEPT_FILLED: Notice = {
  text: 'Signed in again: the form is filled in as you left it, but not sent. Check it and press its button to send it.',
};
/** The form's page after signing in again, when the page no longer has that form (its state changed meanwhile). */
const KEPT_NOT_FILLED: Notice = {
  text: 'Signed in again. The form you sent is no longer on this page (it may have changed meanwhile), so nothing was filled in and nothing was sent.',
  kind: 'error',
};

/** The internal GET's header naming a refusal to show (`refusedInPlace`). */
const REFUSAL_HEADER = 'x-stockist-refusal';

/**
 * Where a refused form is shown again, in order: the page it was on (its Referer, on this front
 * end), the page at the form's address and those above it (`/manager/webhooks` for a new endpoint,
 * `/manager/webhooks/7` for `/manager/webhooks/7/test`), and the front end's home.
 */
function formPages(request: FastifyRequest, home: string): string[] {
  const own = request.url.split('?')[0];
  const pages: string[] = [];
  const referer = formPage(request, home);
  if (referer !== home) pages.push(referer);
  const parts = own.split('/');
  for (let n = parts.length; n > 1 && pages.length < 4; n--) {
    const up = parts.slice(0, n).join('/');
    if (up.startsWith(home)) pages.push(up);
  }
  pages.push(home);
  return [...new Set(pages)];
}

/** The page a form was on (its Referer, when it is a page of this front end), else `fallback`. */
function formPage(request: FastifyRequest, fallback: string): string {
  const referer = request.headers.referer;
  if (typeof referer !== 'string') return fallback;
  try {
    const url = new URL(referer);
    // Through URL both: `localhost:80` and `http://localhost/` are the same host.
    const host = new URL(`http://${request.host}`).host;
    return url.host === host && url.pathname.startsWith(fallback) ? `${url.pathname}${url.search}` : fallback;
  } catch {
    return fallback;
  }
}

const flashKey = (sessionId: string) => createHash('sha256').update(`stockist web flash\0${sessionId}`).digest();
/** A kept form's key: from its handle, which only the browser's cookie holds (the table keys rows by another hash of it). */
const keptKey = (handle: string) => createHash('sha256').update(`stockist kept form\0${handle}`).digest();

/** AES-256-GCM under `key` (a flash's from the session id, a kept form's from its handle). */
function seal(key: Buffer, data: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(data), 'utf8'), cipher.final()]);
  return [iv, sealed, cipher.getAuthTag()].map((b) => b.toString('base64url')).join('.');
}

function openSealed(key: Buffer, sealed: string): unknown {
  const [iv, body, tag] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAuthTag(tag);
    return JSON.parse(Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8'));
  } catch {
    return null;
  }
}

/** The htmx bundle, from its package: both front ends serve it as /assets/htmx.min.js. */
export const htmxAsset = () => ({
  file: path.join(path.dirname(createRequire(import.meta.url).resolve('htmx.org/package.json')), 'dist/htmx.min.js'),
  type: 'text/javascript; charset=utf-8',
});

/**
 * The design system's files (src/web/shared/assets/), served by each front end under its own
 * /assets/: the stylesheet as `<front end>.css`, its script as `<front end>.js`, local times, copy buttons.
 */
export const sharedAssets = (frontEnd: 'console' | 'manager') => ({
  [`${frontEnd}.css`]: { file: webResource('shared', 'assets', 'stockist.css'), type: 'text/css; charset=utf-8' },
  [`${frontEnd}.js`]: { file: webResource('shared', 'assets', 'web.js'), type: 'text/javascript; charset=utf-8' },
  'local-time.js': { file: webResource('shared', 'assets', 'local-time.js'), type: 'text/javascript; charset=utf-8' },
  'copy.js': { file: webResource('shared', 'assets', 'copy.js'), type: 'text/javascript; charset=utf-8' },
});

/** uPlot (the dashboard's and the Usage page's charts) from node_modules: no CDN, the CSP allows this origin only. */
export function uplotAssets() {
  const dist = path.join(path.dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');
  return {
    'uplot.min.js': { file: path.join(dist, 'uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
    'uplot.min.css': { file: path.join(dist, 'uPlot.min.css'), type: 'text/css; charset=utf-8' },
  };
}

/** Seconds until a bucket that refused has a token again. */
const retryAfter = (tokens: number, limits: { capacity: number; refillMs: number }) =>
  Math.max(1, Math.ceil(((1 - tokens) * limits.refillMs) / limits.capacity / 1000));

const accountBucket = (frontEnd: string, email: string) => `${frontEnd}:acct:${hashSecret(emailKey(email)).slice(0, 32)}`;
const addressBucket = (frontEnd: string, address: string) => `${frontEnd}:addr:${address}`;

/**
 * Counts a sign-in attempt, before the password (or code) is checked, per account and per address
 * (SIGN_IN_LIMITS); returns the seconds to wait when either bucket refused, else null. A step that
 * then succeeds gives its attempt back (`signInSucceeded`): only wrong guesses use up the limit.
 */
export async function signInWait(buckets: BucketStore, frontEnd: string, email: string, address: string): Promise<number | null> {
  const account = await buckets.take(accountBucket(frontEnd, email), SIGN_IN_LIMITS.account, 1);
  const byAddress = await buckets.take(addressBucket(frontEnd, address), SIGN_IN_LIMITS.address, 1);
  if (account.allowed && byAddress.allowed) return null;
  return Math.max(
    account.allowed ? 0 : retryAfter(account.tokens, SIGN_IN_LIMITS.account),
    byAddress.allowed ? 0 : retryAfter(byAddress.tokens, SIGN_IN_LIMITS.address),
  );
}

/**
 * A sign-in step (the password, or the two-factor code after it) that succeeded: its attempt is
 * given back to both buckets, so signing in often — two steps each with two-factor — never locks
 * anyone out; the limits hold back guessing, which fails.
 */
export async function signInSucceeded(buckets: BucketStore, frontEnd: string, email: string, address: string): Promise<void> {
  await buckets.take(accountBucket(frontEnd, email), SIGN_IN_LIMITS.account, -1);
  await buckets.take(addressBucket(frontEnd, address), SIGN_IN_LIMITS.address, -1);
}

/** The origin for links handed to merchants (invitations): PUBLIC_BASE_URL, else the one this request came to. */
export const publicOrigin = (config: Config, request: FastifyRequest) => config.publicBaseUrl ?? `${request.protocol}://${request.host}`;

/** What one front end gives `changeOwnPasswordForm`: its names, its service and its account page. */
export interface OwnPasswordChange {
  frontEnd: 'console' | 'manager';
  buckets: BucketStore;
  forms: WebForms;
  email: string;
  /** The front end's service; refuses a wrong current password or a weak new one as `invalid`. */
  change: (input: { current: string; password: string }) => Promise<{ sessionsEnded: number; revokedResets: number }>;
  /** The account page again, with this error. */
  refuse: (status: number, error: string) => Promise<FastifyReply>;
  /** Where the browser goes after the change. */
  accountPath: string;
}

/** POST /account/password on both front ends: one's own password change, from the account page's form. */
export async function changeOwnPasswordForm(
  request: FastifyRequest,
  reply: FastifyReply,
  body: { current: string; password: string; confirm: string },
  own: OwnPasswordChange,
): Promise<FastifyReply> {
  // The current password is a guess like any: the sign-in limits apply.
  const wait = await signInWait(own.buckets, own.frontEnd, own.email, request.ip);
  if (wait !== null) {
    reply.header('Retry-After', String(wait));
    return own.refuse(429, `Too many attempts; try again in ${wait} s.`);
  }
  if (body.password !== body.confirm) return own.refuse(400, 'The two new passwords differ.');
  try {
    const { sessionsEnded, revokedResets } = await own.change({ current: body.current, password: body.password });
    await own.forms.flash(request, 'notice', { text: passwordChangedNotice(sessionsEnded, revokedResets) });
    return reply.redirect(own.accountPath, 303);
  } catch (error) {
    if (!(error instanceof AppError) || error.kind !== 'invalid') throw error;
    request.log.warn({ emailFingerprint: emailFingerprint(own.email), address: request.ip }, `${own.frontEnd} password change refused`);
    const field = error.errors?.[0]?.field === 'current' ? 'current password' : 'new password';
    return own.refuse(400, `The ${field} ${error.errors?.[0]?.message ?? error.message}.`);
  }
}
