import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { successEnvelope } from '../present/envelope.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the handler's payload is sent as is (token endpoint, metrics); default: wrapped in the envelope. */
    envelope?: boolean;
    /** The scope a merchant token needs for this route. */
    scope?: string;
  }
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo the client's X-Request-Id when it is sane, otherwise make one. */
export function requestIdFor(request: { headers: Record<string, string | string[] | undefined> }): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : `req_${randomUUID().replace(/-/g, '')}`;
}

export function installEnvelope(app: FastifyInstance) {
  // Callback hooks, not async ones: no promise per request on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  // The envelope is a hook of each route, added when the route is: no read of
  // `request.routeOptions` (a new object on each read) per response. It runs first among the
  // route's preSerialization hooks, where the global hook ran; no other global one exists. It reads
  // the route's own options when it runs, not when it is added: an `onRoute` hook of a plugin
  // registered later (the front ends' `envelope: false`, web/foundation.ts) runs after this one.
  app.addHook('onRoute', (route) => {
    if (route.config?.envelope === false) return;
    const own = route.preSerialization;
    const wrapInEnvelope = (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
      done(null, reply.statusCode >= 300 || route.config?.envelope === false ? payload : successEnvelope(payload ?? null));
    };
    route.preSerialization = [wrapInEnvelope, ...(own === undefined ? [] : Array.isArray(own) ? own : [own])];
  });
}

/** Sends a stored (possibly replayed) idempotent response as it was first answered. */
export function sendStored(reply: FastifyReply, result: { status: number; body: unknown; replayed: boolean }) {
  if (result.replayed) reply.header('Idempotent-Replayed', 'true');
  // A stored error is counted under its code (usage counters), as when it was first answered.
  const code = (result.body as { code?: unknown } | null)?.code;
  if (result.status >= 400 && typeof code === 'number') reply.request.errorCode = code;
  return reply.code(result.status).send(result.body);
}
