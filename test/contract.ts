import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { MERCHANT_PREFIX } from '../src/http/merchant-routes.ts';
import { ADMIN_PREFIX, adminOpenApiPath } from '../src/http/openapi/admin-openapi.document.ts';
import { openApiPath } from '../src/http/openapi/openapi.document.ts';

/**
 * The contract check every app built by the test helper carries: each response of a documented
 * route (everything under /openapi, and the operator API under /admin/v1) must have its status
 * documented for that operation in the committed docs/openapi.json (docs/openapi-admin.json), and
 * its body must validate against that response's schema. It
 * also compares the body as serialised with the object the handler produced (after the
 * envelope), because Fastify serialises by the response schema and silently drops fields the
 * schema does not list. (test/http/openapi.test.ts keeps the committed document current.)
 */
const DOC_ID = 'stockist-openapi';

type Json = Record<string, any>;

/** The two documents: which routes each covers and how a route's URL becomes its path there. */
const DOCUMENTS = {
  merchant: { file: path.resolve(import.meta.dirname, '../docs/openapi.json'), prefix: `${MERCHANT_PREFIX}/`, pathOf: openApiPath },
  admin: { file: path.resolve(import.meta.dirname, '../docs/openapi-admin.json'), prefix: `${ADMIN_PREFIX}/`, pathOf: adminOpenApiPath },
} as const;
type DocumentName = keyof typeof DOCUMENTS;

const documentOf = (url: string): DocumentName | null =>
  url.startsWith(DOCUMENTS.merchant.prefix) ? 'merchant' : url.startsWith(DOCUMENTS.admin.prefix) ? 'admin' : null;

interface Checker {
  ajv: Ajv2020;
  doc: Json;
  validators: Map<string, ValidateFunction | 'no-content' | 'undocumented'>;
}

const checkers = new Map<DocumentName, Checker>();

function getChecker(name: DocumentName = 'merchant'): Checker {
  const existing = checkers.get(name);
  if (existing) return existing;
  const doc = JSON.parse(fs.readFileSync(DOCUMENTS[name].file, 'utf8')) as Json;
  // OpenAPI adds keywords of its own (example, discriminator …); `x-coerce` is ours.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc, DOC_ID);
  const checker = { ajv, doc, validators: new Map() };
  checkers.set(name, checker);
  return checker;
}

const pointer = (...parts: string[]) => parts.map((p) => `/${p.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

function validatorFor(name: DocumentName, routeUrl: string, method: string, status: number) {
  const c = getChecker(name);
  const key = `${method} ${routeUrl} ${status}`;
  let v = c.validators.get(key);
  if (v) return v;
  const p = DOCUMENTS[name].pathOf(routeUrl);
  let response = c.doc.paths?.[p]?.[method.toLowerCase()]?.responses?.[String(status)] as Json | undefined;
  let base = pointer('paths', p, method.toLowerCase(), 'responses', String(status));
  if (response?.$ref) {
    base = (response.$ref as string).slice(1);
    response = base
      .split('/')
      .slice(1)
      .reduce((o: Json, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], c.doc);
  }
  if (!response) v = 'undocumented';
  else if (!response.content?.['application/json']) v = 'no-content';
  else v = c.ajv.compile({ $ref: `${DOC_ID}#${base}${pointer('content', 'application/json', 'schema')}` });
  c.validators.set(key, v);
  return v;
}

export interface ContractViolation {
  request: string;
  status: number;
  problem: string;
  body: string;
}

/** Checks one response; returns what is wrong with it, or null. */
function checkResponse(name: DocumentName, routeUrl: string, method: string, status: number, payload: string, produced: unknown): string | null {
  // A route a test adds under /admin/v1 on its own (envelope.test.ts's failing route) is in no
  // document; every route the app itself registers is (test/docs/openapi-admin.test.ts).
  if (name === 'admin' && !getChecker(name).doc.paths?.[DOCUMENTS.admin.pathOf(routeUrl)]?.[method.toLowerCase()]) return null;
  const v = validatorFor(name, routeUrl, method, status);
  if (v === 'undocumented') return `status ${status} is not documented for ${method} ${DOCUMENTS[name].pathOf(routeUrl)} (${name} document)`;
  if (payload === '') return v === 'no-content' ? null : `status ${status} is documented with a body but none was sent`;
  if (v === 'no-content') return `status ${status} is documented without a body but one was sent`;
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return 'the body is not JSON';
  }
  if (!v(body)) return `does not match the documented schema: ${getChecker(name).ajv.errorsText(v.errors, { separator: '; ' })}`;
  if (produced !== undefined && !isDeepStrictEqual(body, JSON.parse(JSON.stringify(produced)))) {
    return `the serialised body differs from what the handler produced (a field missing from the response schema is dropped): produced ${JSON.stringify(produced).slice(0, 400)}`;
  }
  return null;
}

/** Checks a webhook delivery's body against the document's `webhooks` entry for its type; returns what is wrong, or null. */
export function checkWebhookBody(text: string): string | null {
  const c = getChecker();
  const body = JSON.parse(text) as { type?: string };
  const type = String(body.type);
  if (!c.doc.webhooks?.[type]) return `event type ${type} is not documented under webhooks`;
  const key = `webhook ${type}`;
  let v = c.validators.get(key);
  if (!v) {
    v = c.ajv.compile({ $ref: `${DOC_ID}#${pointer('webhooks', type, 'post', 'requestBody', 'content', 'application/json', 'schema')}` });
    c.validators.set(key, v);
  }
  if (typeof v === 'string') return null;
  return v(body) ? null : `${type} does not match the documented body: ${c.ajv.errorsText(v.errors, { separator: '; ' })}`;
}

const PRODUCED = Symbol('contract.produced');

function append<T>(existing: T | T[] | undefined, hook: T): T[] {
  return existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook];
}

/**
 * An `onRoute` hook that adds the check to every documented route; violations are collected in
 * `violations` (the helper fails the suite with them) and printed as they happen.
 */
export function contractHook(violations: ContractViolation[]) {
  return (route: RouteOptions) => {
    const url = route.url ?? '';
    const name = documentOf(url);
    if (name === null) return;
    const methods = [route.method].flat();
    if (methods.includes('HEAD')) return;
    route.preSerialization = append(route.preSerialization as never, async (request: FastifyRequest, _reply: FastifyReply, payload: unknown) => {
      (request as unknown as Record<symbol, unknown>)[PRODUCED] = payload;
      return payload;
    }) as never;
    route.onSend = append(route.onSend as never, async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const text =
        payload === undefined || payload === null ? '' : Buffer.isBuffer(payload) ? payload.toString('utf8') : typeof payload === 'string' ? payload : null;
      if (text === null) return payload; // a stream: nothing of the API sends one
      const problem = checkResponse(name, url, request.method, reply.statusCode, text, (request as unknown as Record<symbol, unknown>)[PRODUCED]);
      if (problem) {
        const violation = { request: `${request.method} ${request.url}`, status: reply.statusCode, problem, body: text.slice(0, 600) };
        violations.push(violation);
        console.error('OpenAPI contract violation:', violation);
      }
      return payload;
    }) as never;
  };
}
