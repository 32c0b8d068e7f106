/**
 * How both front ends show an instant (issue 29, item 8): one format, `2026-05-01 14:03 UTC`, in a
 * `<time datetime="2026-05-01T14:03:07Z">` element whose title is the UTC time to the second. The
 * browser's local-time.js (assets/) rewrites the text into the viewer's own zone in the same
 * format (`2026-05-01 23:03 GMT+9`) and keeps the UTC time in the title; without script the page
 * reads in UTC, and says so. Every page renders times through `timeElement`, called by a
 * presenter (`moment` in shared/present.ts gives it to a model as `Html`), never by hand.
 */

/** What pages are handed: epoch ms (the store's columns) or an ISO 8601 instant (the presenters' `…Date` fields). */
export type Instant = number | string | Date;

/** Epoch ms of an instant; null for one that is not a time. */
export function instantMs(value: Instant): number | null {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  return Number.isFinite(ms) && !Number.isNaN(new Date(ms).getTime()) ? ms : null;
}

/** `2026-05-01 14:03 UTC`, or to the second (`2026-05-01 14:03:07 UTC`: the title, where a person hovers for the exact time). */
export function utcText(ms: number, { seconds = false } = {}): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, seconds ? 19 : 16)} UTC`;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The `<time>` element of an instant, as HTML (views print a model's `Html` field unescaped; every
 * part of it is made here from the number, nothing is the caller's text). `none` stands for a
 * missing time (`—`, `never` …).
 */
export function timeElement(value: Instant | null | undefined, none = '—'): string {
  if (value === null || value === undefined) return escapeHtml(none);
  const ms = instantMs(value);
  if (ms === null) return escapeHtml(String(value));
  const datetime = new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `<time datetime="${datetime}" title="${utcText(ms, { seconds: true })}">${utcText(ms)}</time>`;
}
