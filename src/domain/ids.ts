/**
 * A database id as a client sends it (SPEC §1: decimal digits) → the number, or null when it
 * cannot be one of ours: not digits, 0, or past 2^53 − 1 (where a double would silently round it
 * to a neighbouring id).
 */
export function parseId(text: string): number | null {
  if (!/^[0-9]{1,16}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/**
 * An id from a request's path, parsed where the request comes in, for a lookup: text that cannot
 * be one of ours becomes 0, which names no row, so the service answers exactly as for an id that
 * is not there (404). Services take numbers, never the text.
 */
export const lookupId = (text: string): number => parseId(text) ?? 0;
