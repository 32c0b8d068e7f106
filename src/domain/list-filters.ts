import { fieldError } from './errors.ts';
import { parseId } from './ids.ts';

/** What the console's list filters share: calendar days typed in a form and keyset positions in a link. */

const DAY_MS = 86_400_000;

/** `2026-11-25` → that day's first millisecond, UTC; null when it is not a calendar date. */
function utcDay(text: string): number | null {
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

/** A filter form's text field, trimmed; a field left blank (or not sent) is ''. */
export const blank = (text: string | undefined) => (text ?? '').trim();

/** The merchant a list is narrowed to: none for ''; text that is not an id is a 400 on `merchant`. */
export function merchantFilter(text: string): number | null {
  if (text === '') return null;
  const id = parseId(text);
  if (id === null) throw fieldError('merchant', 'must be a merchant id (digits)');
  return id;
}

/** One of `allowed` (a status), or none for ''; anything else is a 400 on `field` listing them. */
export function choiceFilter<T extends string>(field: string, text: string, allowed: readonly T[]): T | null {
  if (text === '') return null;
  if (!(allowed as readonly string[]).includes(text)) throw fieldError(field, `must be one of ${allowed.join(', ')}`);
  return text as T;
}

/**
 * The days `from`–`to` typed in a form (UTC, both ends included) as the instants
 * [createStart, createEnd) a query compares with; either end may be blank (open). A text that is
 * not a date, or `to` before `from`, is a 400 naming the field.
 */
export function dayRange(fromText: string, toText: string): { createStart: number | null; createEnd: number | null } {
  const createStart = fromText === '' ? null : utcDay(fromText);
  if (fromText !== '' && createStart === null) throw fieldError('from', 'must be a date, YYYY-MM-DD');
  const toDay = toText === '' ? null : utcDay(toText);
  if (toText !== '' && toDay === null) throw fieldError('to', 'must be a date, YYYY-MM-DD');
  if (createStart !== null && toDay !== null && toDay < createStart) throw fieldError('to', 'must not be before from');
  return { createStart, createEnd: toDay === null ? null : toDay + DAY_MS };
}
