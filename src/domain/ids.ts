declare const parsed: unique symbol;
/**
 * An id as it comes out of a request (a path or query parameter, a form field, a CLI argument):
 * the number, parsed once where the request comes in (`IdText` in the schema, `parseId`,
 * `lookupId`). A handler's id parameter has this type, so it cannot be the text (Structure II,
 * item 2; test/types/ids.types.ts); services take it as a plain number.
 */
export type RequestId = number & { readonly [parsed]: 'request id' };

/**
 * A database id as a client sends it (SPEC §1: decimal digits) → the number, or null when it
 * cannot be one of ours: not digits, 0, or past 2^53 − 1 (where a double would silently round it
 * to a neighbouring id).
 */
export function parseId(text: string): RequestId | null {
  if (!/^[0-9]{1,16}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) && n > 0 ? (n as RequestId) : null;
}

/**
 * An id from a request's path, parsed where the request comes in, for a lookup: text that cannot
 * be one of ours becomes 0, which names no row, so the service answers exactly as for an id that
 * is not there (404). Services take numbers, never the text.
 */
export const lookupId = (text: string): RequestId => parseId(text) ?? (0 as RequestId);
