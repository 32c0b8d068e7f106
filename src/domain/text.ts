/**
 * SPEC §1 Text: every string a client sends must be valid Unicode without control characters.
 * PostgreSQL refuses NUL in text (a 500 if it reached the database) and replaces lone surrogates
 * differently from SQLite, so the rule is checked before anything is stored, and both databases
 * only ever see text that they store alike. Control characters are Unicode's `Cc` (C0, DEL, C1).
 */
const SINGLE_LINE = /[\p{Cc}\p{Cs}]/u;
/** Free text that may span lines: tab, newline and carriage return (CRLF line ends) are allowed. */
const MULTILINE = /[^\P{Cc}\t\n\r]|\p{Cs}/u;

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** Why `value` breaks the rule, or null when it is fine. */
export function textProblem(value: string, multiline = false): string | null {
  const bad = (multiline ? MULTILINE : SINGLE_LINE).exec(value);
  if (!bad) return null;
  const c = bad[0];
  if (/\p{Cs}/u.test(c)) return `is not valid Unicode (a lone surrogate ${codePoint(c)} at position ${bad.index})`;
  return `must not contain control characters (${codePoint(c)} at position ${bad.index}${multiline ? '; only tab and newline are allowed' : ''})`;
}

/**
 * SPEC §1 Text: SKUs are stored and compared in Unicode NFC (a SKU typed on one system and pasted
 * from another is the same product), and a new SKU may not contain `,` (the `skus=` separator) or
 * whitespace.
 */
export const canonicalSku = (sku: string) => sku.normalize('NFC');
export const SKU_PATTERN = '^[^,\\s]+$';
