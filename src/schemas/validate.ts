import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { validationFailed, type FieldError } from '../domain/errors.ts';
import { textProblem } from '../domain/text.ts';
import { COERCE_KEYWORD, coerceValue } from './common.ts';

/**
 * Two validators: query strings and path params are text by nature, so their types are coerced;
 * bodies are JSON and must carry the right types (`true` is not a quantity). Where the contract
 * lets a body field arrive as a number or a digit string, the schema says so with a union and
 * the `x-coerce` keyword normalises the value after it has validated.
 */
export function makeAjv(coerceTypes: boolean): Ajv {
  // No meta-schema: the schemas are our code, not input — a malformed one still fails strict
  // compilation, and the OpenAPI tests validate every one of them against OpenAPI 3.1's meta-schema.
  // Compiling draft-07's meta-schema for each instance cost ≈ 80 ms of every start-up (issue 14).
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    verbose: true,
    strict: true,
    allowUnionTypes: true,
    meta: false,
    validateSchema: false,
  });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  ajv.addKeyword({
    keyword: COERCE_KEYWORD,
    modifying: true,
    errors: true,
    // biome-ignore lint/suspicious/noExplicitAny: Ajv's own type for the parent object of a modifying keyword
    validate: function coerce(this: unknown, kind: string, data: unknown, parent: unknown, ctx?: { parentData: any; parentDataProperty: string | number }) {
      const result = coerceValue(kind, data, parent as Parameters<typeof coerceValue>[2]);
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
  const errors: FieldError[] = [];
  value = checkText(value, 'body', true, errors);
  if (errors.length) throw invalidText(errors);
  sharedJsonAjv ??= makeAjv(false);
  let validate = bodyValidators.get(schema);
  if (!validate) bodyValidators.set(schema, (validate = sharedJsonAjv.compile(schema)));
  if (!validate(value)) throw validationFailed(toFieldErrors(validate.errors ?? [], 'body'));
  return value as T;
}

/** `/orderItemsList/1/quantity` → `orderItemsList[1].quantity`. */
export function fieldPath(instancePath: string, missing?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
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
    case 'pattern': {
      const description = (error.parentSchema as { description?: string } | undefined)?.description;
      return description ? `must be ${description}` : (error.message ?? 'is invalid');
    }
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

/**
 * SPEC §1 Text, in one place for every route: free text may span lines only in these fields.
 * (A field of this name anywhere in a body: the order's and the refund's `remark`; the console's
 * import upload, `fileText`, which holds a whole CSV or JSON file; the business manager's webhook
 * SKU list, `skuList`, one SKU a line; the console's internal order `note`; the console's product
 * form's options, `optionsJson`, a JSON object as typed, and its channel form's carriers,
 * `carrierList`, one a line.)
 */
const MULTILINE_FIELDS = new Set(['remark', 'fileText', 'skuList', 'note', 'optionsJson', 'carrierList']);
/** Enough to fix a request; a bulk body full of bad rows does not need a million errors. */
const MAX_TEXT_ERRORS = 50;
/**
 * HTTP bodies are already held to MAX_JSON_DEPTH (≤ 1000) by the parser; a document read from a
 * file (CLI import) is not, and this walk recurses.
 */
const MAX_TEXT_DEPTH = 1000;

const pathOf = (trail: (string | number)[], root: string) => {
  let out = '';
  for (const p of trail) out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  return out === '' ? root : out;
};

/**
 * The pre-validation pass over a parsed input: every string — values and property names, known
 * fields and ignored ones alike — is checked against the Text rule (domain/text.ts), and with
 * `trim` the values are trimmed in place (SPEC §1: bounds apply after trimming). Runs before the
 * schemas, so a value that breaks the rule is reported as such whatever else is wrong with it.
 */
export function checkText(value: unknown, root: string, trim: boolean, errors: FieldError[], trail: (string | number)[] = [], multiline = false): unknown {
  if (typeof value === 'string') {
    const text = trim ? value.trim() : value;
    if (errors.length < MAX_TEXT_ERRORS) {
      const problem = textProblem(text, multiline);
      if (problem) errors.push({ field: pathOf(trail, root), message: problem });
    }
    return text;
  }
  if (trail.length > MAX_TEXT_DEPTH && value !== null && typeof value === 'object') {
    errors.push({ field: pathOf(trail, root), message: `is nested more than ${MAX_TEXT_DEPTH} levels deep` });
    return value;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      trail.push(i);
      value[i] = checkText(value[i], root, trim, errors, trail);
      trail.pop();
    }
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const problem = errors.length < MAX_TEXT_ERRORS ? textProblem(key) : null;
      if (problem) errors.push({ field: pathOf(trail, root), message: `a property name ${problem}` });
      trail.push(key);
      record[key] = checkText(record[key], root, trim, errors, trail, MULTILINE_FIELDS.has(key));
      trail.pop();
    }
  }
  return value;
}

export const invalidText = (errors: FieldError[]) =>
  validationFailed(errors, errors.length === 1 ? `${errors[0].field}: ${errors[0].message}` : 'validation failed');
