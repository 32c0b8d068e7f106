import { fieldError } from './errors.ts';

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Parses an ISO 8601 instant that names its offset (`Z` or `±hh:mm`); returns epoch ms or null.
 * Calendar-impossible dates (Feb 30th) are refused rather than rolled over.
 */
export function parseInstant(text: string): number | null {
  const m = ISO_INSTANT.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m;
  const ms = Date.parse(text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  if (Number.isNaN(ms)) return null;
  const probe = new Date(Date.UTC(+y, +mo - 1, +d, +h, +mi, +(s ?? 0)));
  if (probe.getUTCDate() !== +d || probe.getUTCMonth() !== +mo - 1 || +h > 23 || +mi > 59 || +(s ?? 0) > 59) return null;
  return ms;
}

/** Epoch ms → `2022-11-01T06:21:20Z` (second precision, UTC). */
export function formatInstant(ms: number | null | undefined): string | null {
  if (ms === null || ms === undefined) return null;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A query parameter holding an instant: absent or blank → null; anything unparsable → 400 naming it. */
export function instantParam(value: string | undefined, field: string): number | null {
  if (value === undefined || value.trim() === '') return null;
  const ms = parseInstant(value.trim());
  if (ms === null) throw fieldError(field, 'must be an ISO 8601 instant with Z or an offset, e.g. 2022-11-01T06:21:20Z');
  return ms;
}

/** A [start, end] window of query parameters; either end may be open; start after end → 400. */
export function timeWindow(
  [startField, startText]: [string, string | undefined],
  [endField, endText]: [string, string | undefined],
): { start: number | null; end: number | null } {
  const start = instantParam(startText, startField);
  const end = instantParam(endText, endField);
  if (start !== null && end !== null && start > end) throw fieldError(startField, `must not be after ${endField}`);
  return { start, end };
}
