import { parseId } from './ids.ts';

/** What the console's list filters share: calendar days typed in a form and keyset positions in a link. */

export const DAY_MS = 86_400_000;

/** `2026-11-25` → that day's first millisecond, UTC; null when it is not a calendar date. */
export function utcDay(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return null;
  const ms = Date.UTC(+m[1], +m[2] - 1, +m[3]);
  return new Date(ms).toISOString().startsWith(text) ? ms : null;
}

/** The keyset position of a page, `<created_at>.<id>` of the previous page's last row. */
export const encodeTimeKeyset = ([time, id]: [number, number]) => `${time}.${id}`;

/** A position `encodeTimeKeyset` wrote, or null. */
export function decodeTimeKeyset(text: string): [number, number] | null {
  const m = /^([0-9]{1,16})\.([0-9]{1,16})$/.exec(text);
  return m && Number.isSafeInteger(+m[1]) && parseId(m[2]) !== null ? [+m[1], +m[2]] : null;
}
