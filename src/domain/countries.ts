const names = new Intl.DisplayNames(['en'], { type: 'region' });

/** "CN" → "China"; unknown codes give the code back. */
export function countryName(code: string): string {
  try {
    return names.of(code) ?? code;
  } catch {
    return code;
  }
}
