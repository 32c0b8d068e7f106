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
    const compileAsWritten = build(externalSchemas, serializerOptions);
    const compile: typeof compileAsWritten = (route) => compileAsWritten({ ...route, schema: nullableForSerializer(route.schema) });
    if (eager) return compile;
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc) => (serialize ??= compile(route))(doc);
    };
  };
}

const isSchemaObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNullType = (value: unknown) => isSchemaObject(value) && value.type === 'null' && Object.keys(value).length === 1;

/**
 * The response schema as fast-json-stringify should see it: every `anyOf: [schema, {type: null}]`
 * (TypeBox's `Nullable`, how the OpenAPI document and the validators keep saying "this or null")
 * becomes `{...schema, nullable: true}`. For an `anyOf`, fast-json-stringify picks the branch by
 * running ajv on the value — for a nullable time that is the `date-time` format's regex and date
 * check on every time in every response (ten orders carry ~50 of them). `nullable` is one `=== null`
 * test, and the value is written by the same serializer as the branch would have chosen.
 */
export function nullableForSerializer(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(nullableForSerializer);
  if (!isSchemaObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(schema)) out[key] = nullableForSerializer(schema[key]);
  const options = out.anyOf;
  if (Array.isArray(options) && options.length === 2 && options.some(isNullType)) {
    const value = options.find((o) => !isNullType(o));
    if (isSchemaObject(value) && typeof value.type === 'string' && value.anyOf === undefined && value.$ref === undefined) {
      const { anyOf: _union, ...siblings } = out;
      return { ...value, ...siblings, nullable: true };
    }
  }
  return out;
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
