import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { validationFailed, type FieldError } from '../domain/errors.ts';
import { COERCE_KEYWORD, coerceValue } from '../schemas/common.ts';

/**
 * Two validators: query strings and path params are text by nature, so their types are coerced;
 * bodies are JSON and must carry the right types (`true` is not a quantity). Where the contract
 * lets a body field arrive as a number or a digit string, the schema says so with a union and
 * the `x-coerce` keyword normalises the value after it has validated.
 */
function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, coerceTypes, useDefaults: true, removeAdditional: false, verbose: true, strict: true, allowUnionTypes: true });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  ajv.addKeyword({
    keyword: COERCE_KEYWORD,
    modifying: true,
    errors: true,
    validate: function coerce(this: unknown, kind: string, data: unknown, parent: unknown, ctx?: { parentData: any; parentDataProperty: string | number }) {
      const result = coerceValue(kind, data, parent as { anyOf?: { minimum?: number; maximum?: number }[] });
      if (!result.ok) {
        (coerce as unknown as { errors: Partial<ErrorObject>[] }).errors = [{ keyword: COERCE_KEYWORD, message: result.message, params: {} }];
        return false;
      }
      if (ctx && ctx.parentData !== undefined) ctx.parentData[ctx.parentDataProperty] = result.value;
      return true;
    },
  });
  return ajv;
}

const bodyValidators = new WeakMap<object, ValidateFunction>();
let sharedJsonAjv: Ajv | null = null;

/**
 * Validates (and normalises) a JSON document outside HTTP exactly as a request body would be:
 * the CLI import and the demo seed go through the same rules as `POST /admin/v1/import`.
 */
export function parseDocument<T>(schema: object, value: unknown): T {
  sharedJsonAjv ??= makeAjv(false);
  let validate = bodyValidators.get(schema);
  if (!validate) bodyValidators.set(schema, (validate = sharedJsonAjv.compile(schema)));
  if (!validate(value)) throw validationFailed(toFieldErrors(validate.errors ?? [], 'body'));
  return value as T;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const forText = makeAjv(true);
  const forJson = makeAjv(false);
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? forJson : forText;
    return ajv.compile(schema as object) as ValidateFunction;
  };
}

/** `/orderItemsList/1/quantity` → `orderItemsList[1].quantity`. */
export function fieldPath(instancePath: string, missing?: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (missing !== undefined) parts.push(missing);
  let out = '';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`;
  return out;
}

function describe(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'anyOf':
    case 'oneOf': {
      const description = (error.parentSchema as { description?: string } | undefined)?.description;
      return description ? `must be ${description}` : 'has the wrong type';
    }
    case 'enum':
      return `must be one of: ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** Ajv's error list → one field error per field, the most specific message first. */
export function toFieldErrors(errors: ErrorObject[], part: string | undefined): FieldError[] {
  // Errors inside a union's branches are noise once the union itself reports the field.
  const unionPaths = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.schemaPath);
  const seen = new Map<string, FieldError>();
  for (const error of errors) {
    if (unionPaths.some((p) => error.schemaPath.startsWith(`${p}/`))) continue;
    const missing = error.keyword === 'required' ? (error.params as { missingProperty: string }).missingProperty : undefined;
    let field = fieldPath(error.instancePath, missing);
    if (field === '') field = part === 'body' ? 'body' : (part ?? 'request');
    if (!seen.has(field)) seen.set(field, { field, message: describe(error) });
  }
  return [...seen.values()];
}
