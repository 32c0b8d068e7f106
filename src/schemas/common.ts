import { Type, type Static, type TSchema } from 'typebox';
import { isAssignedCountry } from '../domain/countries.ts';
import { formatCents, MAX_PRICE_CENTS } from '../domain/money.ts';
import { parseId, type RequestId } from '../domain/ids.ts';
import { canonicalSku, SKU_PATTERN } from '../domain/text.ts';
import { webUrlProblem } from '../domain/web-url.ts';

/** Custom validation keyword: after a value validates, normalise it (digit string → number, money → cents). */
export const COERCE_KEYWORD = 'x-coerce';

type Coerced = { ok: true; value: unknown } | { ok: false; message: string };

type CoercedSchema = { anyOf?: { minimum?: number; maximum?: number }[]; pattern?: string; maxLength?: number };

const patterns = new Map<string, RegExp>();
/** Whether `text` meets the string schema's `pattern` and `maxLength` as Ajv counts them (code points, a `u` regex). */
function fitsString(text: string, { pattern, maxLength }: CoercedSchema): boolean {
  if (maxLength !== undefined && text.length > maxLength && [...text].length > maxLength) return false;
  if (pattern === undefined) return true;
  let re = patterns.get(pattern);
  if (!re) patterns.set(pattern, (re = new RegExp(pattern, 'u')));
  return re.test(text);
}

export function coerceValue(kind: string, data: unknown, schema: CoercedSchema = {}): Coerced {
  if (kind === 'integer') {
    const n = typeof data === 'string' ? Number(data) : (data as number);
    const { minimum, maximum } = schema.anyOf?.[0] ?? {};
    if (!Number.isSafeInteger(n) || (minimum !== undefined && n < minimum) || (maximum !== undefined && n > maximum)) {
      return { ok: false, message: `must be ${describeInteger({ minimum, maximum })}` };
    }
    return { ok: true, value: n };
  }
  if (kind === 'cents' || kind === 'signedCents') {
    const text = typeof data === 'number' ? String(data) : (data as string);
    const match = (kind === 'cents' ? /^()(\d+)(?:\.(\d{1,2}))?$/ : /^(-?)(\d+)(?:\.(\d{1,2}))?$/).exec(text);
    if (!match) return { ok: false, message: 'must be an amount with at most two decimals' };
    const cents = Number(match[2]) * 100 + Number((match[3] ?? '').padEnd(2, '0'));
    if (!Number.isSafeInteger(cents) || cents > MAX_PRICE_CENTS) return { ok: false, message: `is too large: at most ${formatCents(MAX_PRICE_CENTS)}` };
    return { ok: true, value: match[1] === '-' ? -cents : cents };
  }
  // The kinds below refine a plain string; a value of another type is left to the `type` keyword.
  if (typeof data !== 'string') return { ok: true, value: data };
  if (kind === 'sku') return { ok: true, value: canonicalSku(data) };
  if (kind === 'country' || (kind === 'countryOrAny' && data !== '*')) {
    const code = data.toUpperCase();
    if (!/^[A-Z]{2}$/.test(code) || !isAssignedCountry(code)) return { ok: false, message: 'must be an assigned ISO 3166-1 alpha-2 country code' };
    return { ok: true, value: code };
  }
  if (kind === 'webUrl') {
    // "" is no link at all (as null is).
    const problem = data === '' ? null : webUrlProblem(data, 'http(s)');
    return problem ? { ok: false, message: problem } : { ok: true, value: data };
  }
  if (kind === 'id') {
    const id = parseId(data);
    if (id === null) return { ok: false, message: `must be an id: an integer from 1 to ${Number.MAX_SAFE_INTEGER}` };
    return { ok: true, value: id };
  }
  if (kind === 'lookupId') {
    // This keyword runs before the string's own `pattern` and `maxLength`: text they refuse is left
    // as it is, for them to answer (400) as before. Other text that cannot be one of our ids names
    // no row: 0, so the route answers as for a missing one (404).
    if (!fitsString(data, schema)) return { ok: true, value: data };
    return { ok: true, value: parseId(data) ?? 0 };
  }
  return { ok: true, value: data };
}

/** An integer sent as a JSON number or a digit string (SPEC §1 leniency); the handler sees a number. */
export const IntegerLike = (options: { minimum?: number; maximum?: number } = {}) =>
  Type.Unsafe<number>({
    anyOf: [Type.Integer(options), Type.String({ pattern: options.minimum !== undefined && options.minimum < 0 ? '^-?[0-9]{1,16}$' : '^[0-9]{1,16}$' })],
    description: describeInteger(options),
    [COERCE_KEYWORD]: 'integer',
  });

function describeInteger({ minimum, maximum }: { minimum?: number; maximum?: number }): string {
  if (minimum !== undefined && maximum !== undefined) return `an integer from ${minimum} to ${maximum}`;
  if (minimum !== undefined) return `an integer of at least ${minimum}`;
  return 'an integer';
}

/** Money in, as a JSON number or decimal string with at most two decimals; the handler sees cents. */
export const MoneyInput = () =>
  Type.Unsafe<number>({
    anyOf: [Type.Number({ minimum: 0 }), Type.String({ pattern: '^[0-9]+(\\.[0-9]{1,2})?$' })],
    description: 'a non-negative amount with at most two decimals, as a number or a string ("12.50")',
    [COERCE_KEYWORD]: 'cents',
  });

/**
 * A link the server stores and hands on (a product's or category's image): an absolute http(s) URL
 * (domain/web-url.ts), "" or null for none. `type: [string, null]` rather than a union, so the
 * field's error is the rule's own sentence.
 */
export const WebUrlInput = (maxLength: number) =>
  OrNull(Type.String({ maxLength, description: 'an absolute http:// or https:// URL; "" or null: none', [COERCE_KEYWORD]: 'webUrl' }));

/** A database id sent as a digit string or a JSON number. */
export const IdLike = () => IntegerLike({ minimum: 1 });

export const Str = (maxLength: number, minLength = 1) => Type.String({ minLength, maxLength });

/** SPEC §1 Text: an assigned ISO 3166-1 alpha-2 code, any case; the handler sees it upper-cased. */
export const CountryCode = () => Type.String({ pattern: '^[A-Za-z]{2}$', description: 'an ISO 3166-1 alpha-2 country code', [COERCE_KEYWORD]: 'country' });

/** A country code or `*` (every destination). */
export const CountryOrAny = () =>
  Type.String({ pattern: '^([A-Za-z]{2}|\\*)$', description: 'an ISO 3166-1 alpha-2 country code or "*"', [COERCE_KEYWORD]: 'countryOrAny' });

/** A SKU that names an existing product: compared in Unicode NFC (SPEC §1 Text). */
export const SkuRef = (minLength = 1) => Type.String({ minLength, maxLength: 64, [COERCE_KEYWORD]: 'sku' });

/** A SKU being created (product upsert, import): NFC, and no `,` or whitespace so that `skus=` can name it. */
export const NewSku = () =>
  Type.String({ minLength: 1, maxLength: 64, pattern: SKU_PATTERN, description: 'a SKU code without commas or whitespace', [COERCE_KEYWORD]: 'sku' });

/**
 * A database id in a path or query parameter: digits, 1 … 2^53 − 1 (larger ones would not survive
 * the conversion to a number). Parsed here, once: the handler sees the number (`RequestId`), never
 * the text; the OpenAPI document still shows the parameter as the digit string the client sends.
 */
export const IdText = (description = `an id: an integer from 1 to ${Number.MAX_SAFE_INTEGER}`) =>
  Type.Unsafe<RequestId>({ type: 'string', pattern: '^[0-9]{1,16}$', description, [COERCE_KEYWORD]: 'id' });

/**
 * `IdText` for a form body's field. Bodies are validated without type coercion, and then Ajv checks
 * a string's type after the keywords that run on any type (ours among them) whenever the schema
 * has string keywords such as `pattern`: the parsed number would fail `type: string`. Without
 * `pattern` the type is checked first; the `id` parse checks the same digits (and answers first
 * for bad text in `IdText` too, so the message is the same).
 */
export const IdField = (description = `an id: an integer from 1 to ${Number.MAX_SAFE_INTEGER}`) =>
  Type.Unsafe<RequestId>({ type: 'string', description, [COERCE_KEYWORD]: 'id' });

/**
 * An id in a merchant route's path that the API answers 404 for when it cannot be one of ours (an
 * order's `id`, a webhook's): the string schema `options` give, parsed here into the number, 0 for
 * text that names no row (`lookupId`). The handler sees the number (`RequestId`), never the text.
 */
export const LookupId = (options: { maxLength?: number; pattern?: string; description?: string }) =>
  Type.Unsafe<RequestId>({ type: 'string', ...options, [COERCE_KEYWORD]: 'lookupId' });

/** The success envelope (SPEC §1); errors use `ErrorEnvelope`. */
const Envelope = <T extends TSchema>(data: T) => Type.Object({ code: Type.Literal(10000), message: Type.Literal('success'), data });

export const ErrorEnvelope = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  data: Type.Null(),
  requestId: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }, { additionalProperties: true }))),
});
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

/** The query fields of a numbered page (SPEC §1): `pageNumber` from 1, `pageSize` up to the list's maximum. */
export const PageQueryFields = (maxSize: number, descriptions: { pageNumber?: string; pageSize?: string } = {}) => ({
  pageNumber: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, ...(descriptions.pageNumber ? { description: descriptions.pageNumber } : {}) })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: maxSize, ...(descriptions.pageSize ? { description: descriptions.pageSize } : {}) })),
});

export const Page = <T extends TSchema>(item: T) =>
  Type.Object({ total: Type.Integer(), pageNumber: Type.Integer(), pageSize: Type.Integer(), list: Type.Array(item) });

/** A string from a fixed list (an `enum`, so errors list the allowed values). */
export const StringEnum = <const T extends readonly string[]>(values: T, options: { description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

/**
 * An object or array that may also be null. Written as `type: [t, "null"]` rather than a union,
 * so a wrong value inside still reports its own field path instead of "wrong type" on the parent.
 */
export const OrNull = <T extends TSchema & { type: string }>(schema: T) => Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });

/** A value or null (responses; for request bodies prefer `OrNull`, which keeps field paths). */
export const Nullable = <T extends TSchema>(schema: T, options: { description?: string } = {}) => Type.Union([schema, Type.Null()], options);

/** An id in a response: a decimal digit string (SPEC §1). */
export const IdString = (description?: string) => Type.String({ pattern: '^[0-9]+$', ...(description ? { description } : {}) });

/** A time in a response: ISO 8601 UTC, second precision, `Z` suffix (SPEC §1). */
export const Instant = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });

/** Where the API names no currency beside an amount, the amount is in this one. */
export const IN_SUPPLIER_CURRENCY = "in the supplier's currency (SUPPLIER_CURRENCY; the currency of every order and account)";

/** A currency code beside amounts: the supplier's, one for all of Stockist's money. */
export const CURRENCY_CODE = "ISO 4217: the supplier's currency (SUPPLIER_CURRENCY), the same for every amount";

/** Money in a response: a JSON number with at most two decimals, in the supplier's currency (`currencyCode`, `currency`). */
export const Amount = (description?: string) => Type.Number({ ...(description ? { description } : {}) });

/**
 * A merchant route's `schema.response`: the envelope around its data on 200, the error envelope
 * otherwise. Fastify serialises with these (fields not listed are dropped), the OpenAPI document
 * is generated from them and the test helper checks every response against that document.
 */
export const MerchantResponses = <T extends TSchema>(data: T) => ({
  // Typed `unknown`: handlers return the bare data; the envelope is added in preSerialization.
  200: Type.Unsafe<unknown>(Envelope(data)),
  '4xx': ErrorEnvelope,
  '5xx': ErrorEnvelope,
});

/** An optional string that may also be sent as null; bounds apply after trimming. */
export const OptStr = (maxLength: number) =>
  Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()], { description: `a string of at most ${maxLength} characters` }));
