/**
 * One rule for every link the server stores and hands on (issue 44, 13): a product's image, a
 * category's image, a channel's tracking URL template. Each ends up in a merchant's hands or in
 * an `href`, so only an absolute URL of the web's own schemes is taken: never `javascript:`,
 * `data:`, a scheme-relative `//host` or a path, whose meaning depends on where it is shown.
 */
export type WebSchemes = 'https' | 'http(s)';

const PREFIX: Record<WebSchemes, RegExp> = { https: /^https:\/\//i, 'http(s)': /^https?:\/\//i };
const NAMED: Record<WebSchemes, string> = { https: 'https://', 'http(s)': 'http:// or https://' };

/** Why `text` is not such a URL, or null when it is. */
export function webUrlProblem(text: string, schemes: WebSchemes): string | null {
  const problem = `must be an absolute ${NAMED[schemes]} URL`;
  // A URL holds no white space or control character; the URL parser would quietly drop or encode them.
  if (/[\p{Cc}\p{Z}\s]/u.test(text) || !PREFIX[schemes].test(text)) return problem;
  try {
    return new URL(text).hostname === '' ? problem : null;
  } catch {
    return problem;
  }
}
