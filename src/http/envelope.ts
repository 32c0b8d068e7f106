import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the handler's payload is sent as is (token endpoint, metrics); default: wrapped in the envelope. */
    envelope?: boolean;
    /** The scope a merchant token needs for this route. */
    scope?: string;
  }
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;

/** Echo the client's X-Request-Id when it is sane, otherwise make one. */
export function requestIdFor(request: { headers: Record<string, string | string[] | undefined> }): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : `req_${randomUUID().replace(/-/g, '')}`;
}

const MAX_DEPTH = 64;

/** SPEC §1: string fields are trimmed before bounds are checked. Mutates the parsed body in place. */
function trimStrings(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) return value;
  if (typeof value === 'string') return value.trim();
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = trimStrings(value[i], depth + 1);
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = trimStrings(record[key], depth + 1);
  }
  return value;
}

export const ok = <T>(data: T) => ({ code: 10000, message: 'success', data });

export function installEnvelope(app: FastifyInstance) {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  app.addHook('preValidation', async (request: FastifyRequest) => {
    if (request.body !== undefined) request.body = trimStrings(request.body);
  });
  app.addHook('preSerialization', async (request, reply, payload) => {
    if (reply.statusCode >= 300 || request.routeOptions.config?.envelope === false) return payload;
    return ok(payload ?? null);
  });
}

/** Sends a stored (possibly replayed) idempotent response as it was first answered. */
export function sendStored(reply: FastifyReply, result: { status: number; body: unknown; replayed: boolean }) {
  if (result.replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.code(result.status).send(result.body);
}
