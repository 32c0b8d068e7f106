import type { ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import SerializerSelector, { type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import { AppError, type FieldError } from '../domain/errors.ts';
import { checkText, invalidText, makeAjv } from '../schemas/validate.ts';

/**
 * Each route's validator is compiled on the route's first request, not at start-up: compiling
 * every schema of every route took about as long as the rest of start-up together (issue 14).
 * `eager` compiles at once (the tests that list every route use it to find a broken schema early).
 */
export function validatorCompiler(options: { eager?: boolean } = {}): FastifySchemaCompiler<unknown> {
  const forText = makeAjv(true);
  const forJson = makeAjv(false);
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? forJson : forText;
    if (options.eager) return ajv.compile(schema as object) as ValidateFunction;
    let compiled: ValidateFunction | undefined;
    // Fastify reads `.errors` from the function it was given after a failed call.
    const lazy = Object.assign(
      (data: unknown) => {
        compiled ??= ajv.compile(schema as object);
        const ok = compiled(data);
        lazy.errors = compiled.errors;
        return ok;
      },
      { errors: null as ValidateFunction['errors'] },
    );
    return lazy;
  };
}

/** Response serializers (fast-json-stringify), likewise built on the route's first response. */
export function lazySerializers(eager = false): SerializerFactory {
  const build = SerializerSelector();
  return (externalSchemas, serializerOptions) => {
    const compile = build(externalSchemas, serializerOptions);
    if (eager) return compile;
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc) => (serialize ??= compile(route))(doc);
    };
  };
}

/** The request headers the server reads (credentials, idempotency, caching, proxy): held to the Text rule too. */
const HEADERS_READ = ['authorization', 'content-type', 'idempotency-key', 'if-none-match', 'x-forwarded-for', 'x-forwarded-proto'];

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;
const hasBody = (request: FastifyRequest) =>
  request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0');

/**
 * SPEC §1 Text for every route: headers we read are checked on arrival (before authentication
 * reads `Authorization`); a body in a charset other than UTF-8 is 415/41500 before it is parsed;
 * the body, query string and path parameters are checked (and the body trimmed) before the
 * route's schema validates them. Errors are AppErrors, so the OAuth endpoint answers them in its
 * RFC 6749 shape like any other of its refusals.
 */
export function installTextRule(app: FastifyInstance) {
  app.addHook('onRequest', async (request) => {
    const errors: FieldError[] = [];
    for (const name of HEADERS_READ) {
      const value = request.headers[name];
      if (value !== undefined) checkText(value, name, false, errors);
    }
    if (errors.length) throw invalidText(errors);
  });
  app.addHook('preParsing', async (request, _reply, payload) => {
    const type = request.headers['content-type'];
    const charset = typeof type === 'string' && hasBody(request) ? CHARSET.exec(type)?.[1] : undefined;
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      throw new AppError(
        'unsupported_format',
        41500,
        `the body's charset ${JSON.stringify(charset)} is not supported: send UTF-8 (Content-Type: application/json; charset=utf-8)`,
      );
    }
    return payload;
  });
  app.addHook('preValidation', async (request) => {
    const errors: FieldError[] = [];
    if (request.body !== undefined) request.body = checkText(request.body, 'body', true, errors);
    checkText(request.query, 'query', false, errors);
    checkText(request.params, 'params', false, errors);
    if (errors.length) throw invalidText(errors);
  });
}
