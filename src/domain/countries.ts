// The package's main entry registers all of its ~80 languages' country names (~1 MB of strings held
// for the process's life); only the list of codes is used here — names come from Intl.DisplayNames —
// so the entry without languages (docs/performance.md, "Memory on Node 24").
import countries from 'i18n-iso-countries/index.js';

const names = new Intl.DisplayNames(['en'], { type: 'region' });

/**
 * SPEC §1 Text: the assigned ISO 3166-1 alpha-2 codes. The list comes from i18n-iso-countries,
 * which also carries XK (Kosovo): a user-assigned code that ISO has not assigned, so it is left out.
 */
const ASSIGNED = new Set(Object.keys(countries.getAlpha2Codes()).filter((code) => code !== 'XK'));

/** "cn" → true, "ZZ" → false. */
export const isAssignedCountry = (code: string) => ASSIGNED.has(code.toUpperCase());

/** "CN" → "China"; unknown codes give the code back. */
export function countryName(code: string): string {
  try {
    return names.of(code) ?? code;
  } catch {
    return code;
  }
}
