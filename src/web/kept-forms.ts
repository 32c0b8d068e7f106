/**
 * A form sent after its session ended (Front ends III, 3): what was typed is kept for a few minutes
 * (web/foundation.ts, table `web_kept_forms`) and written back into the same form once its user has
 * signed in again. These are the pure parts: which fields may be kept, and filling a rendered page's
 * form with them. Design: docs/decisions.md, "A form survives the session's end".
 */

/** The fields of a kept form: name → what was sent (a list for a name sent several times: ticked boxes). */
export type KeptFields = Record<string, string | string[]>;

/**
 * Fields never kept: the CSRF token and one-time key (the page rendered after signing in has its
 * own), and anything secret — passwords, their confirmation, the current password, a two-factor or
 * recovery code, tokens and secrets by name.
 */
const NEVER_KEPT = new Set(['_csrf', '_formKey', 'formKey', 'password', 'confirm', 'current', 'code']);
const SECRET_NAME = /pass|secret|token|csrf|recovery|totp/i;

/**
 * A kept form holds at most this much text, and one field at most a quarter of it: what a person
 * types, not a pasted import file (that field is left out). Anyone can send a signed-out POST, so
 * what one costs the database stays small.
 */
export const KEPT_TEXT_LIMIT = 64 * 1024;

/** What of a form body may be kept: text fields only, secrets and oversized fields left out. */
export function keptFields(body: Record<string, unknown>): KeptFields {
  const kept: KeptFields = {};
  let size = 0;
  for (const [name, value] of Object.entries(body)) {
    if (NEVER_KEPT.has(name) || SECRET_NAME.test(name)) continue;
    const text = typeof value === 'string' ? value : Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : null;
    if (text === null) continue;
    const length = [text].flat().reduce((n, v) => n + v.length, name.length);
    if (length > KEPT_TEXT_LIMIT / 4 || size + length > KEPT_TEXT_LIMIT) continue;
    size += length;
    kept[name] = text;
  }
  return kept;
}

const escapeAttribute = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** An attribute's value as the browser reads it (the entities our templates write decoded). */
const decodeEntities = (text: string) =>
  text.replace(/&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos);/gi, (whole, entity: string) => {
    const e = entity.toLowerCase();
    if (e.startsWith('#x')) return String.fromCodePoint(Number.parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(Number(e.slice(1)));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[e] ?? whole;
  });

const ATTRIBUTE = /\s([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

/** A tag's attributes (`<input a="1" b>` → {a: '1', b: ''}), names in lower case, values decoded. */
function attributesOf(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  const inner = tag.replace(/^<[a-z]+/i, '').replace(/\/?>$/, '');
  for (const m of inner.matchAll(ATTRIBUTE)) out[m[1].toLowerCase()] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  return out;
}

/** The tag without the named attributes, then with `extra` added before its end. */
function retag(tag: string, drop: readonly string[], extra: string): string {
  const end = tag.endsWith('/>') ? '/>' : '>';
  const body = tag.slice(0, tag.length - end.length).replace(ATTRIBUTE, (whole, name: string) => (drop.includes(name.toLowerCase()) ? '' : whole));
  return `${body}${extra}${end}`;
}

/** Input types whose value is never written back (buttons, files, passwords). */
const NOT_FILLED = new Set(['submit', 'button', 'reset', 'image', 'file', 'password']);

/** Writes `fields` into one form's markup (between `<form …>` and `</form>`). */
function fillSegment(segment: string, fields: KeptFields): string {
  const values = (name: string) => {
    const v = fields[name];
    return v === undefined ? undefined : Array.isArray(v) ? v : [v];
  };
  // Several text fields of one name take the sent values in order.
  const taken = new Map<string, number>();
  const next = (name: string) => {
    const all = values(name);
    if (!all) return undefined;
    const i = taken.get(name) ?? 0;
    taken.set(name, i + 1);
    return all[i];
  };
  return segment
    .replace(/<textarea\b[^>]*>[\s\S]*?<\/textarea>/gi, (whole) => {
      const open = whole.slice(0, whole.indexOf('>') + 1);
      const name = attributesOf(open).name;
      const value = name === undefined ? undefined : next(name);
      return value === undefined ? whole : `${open}${escapeAttribute(value)}</textarea>`;
    })
    .replace(/<select\b[^>]*>[\s\S]*?<\/select>/gi, (whole) => {
      const open = whole.slice(0, whole.indexOf('>') + 1);
      const name = attributesOf(open).name;
      const chosen = name === undefined ? undefined : values(name);
      if (!chosen) return whole;
      return whole.replace(/<option\b[^>]*>([^<]*)/gi, (option, text: string) => {
        const tag = option.slice(0, option.indexOf('>') + 1);
        const value = attributesOf(tag).value ?? decodeEntities(text).trim();
        return `${retag(tag, ['selected'], chosen.includes(value) ? ' selected' : '')}${text}`;
      });
    })
    .replace(/<input\b[^>]*>/gi, (tag) => {
      const attributes = attributesOf(tag);
      const name = attributes.name;
      const type = (attributes.type ?? 'text').toLowerCase();
      if (name === undefined || NOT_FILLED.has(type)) return tag;
      if (type === 'checkbox' || type === 'radio') {
        // Not sent: not ticked (a browser sends only ticked boxes).
        return retag(tag, ['checked'], values(name)?.includes(attributes.value ?? 'on') ? ' checked' : '');
      }
      const value = next(name);
      return value === undefined ? tag : retag(tag, ['value'], ` value="${escapeAttribute(value)}"`);
    });
}

/**
 * The page with the first form posting to `action` filled with `fields`; `filled` is false when
 * the page has no such form (it then is returned unchanged). A checkbox of that form not sent was
 * not ticked, so it is unticked.
 */
export function fillForm(html: string, action: string, fields: KeptFields): { html: string; filled: boolean } {
  for (const open of html.matchAll(/<form\b[^>]*>/gi)) {
    if (attributesOf(open[0]).action !== action) continue;
    const start = (open.index ?? 0) + open[0].length;
    const end = html.indexOf('</form>', start);
    if (end < 0) break;
    return { html: `${html.slice(0, start)}${fillSegment(html.slice(start, end), fields)}${html.slice(end)}`, filled: true };
  }
  return { html, filled: false };
}
