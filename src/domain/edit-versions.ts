import { AppError, fieldError } from './errors.ts';

/**
 * Optimistic concurrency (two tabs, two scripts): a save says which stored version it was made
 * against, and one made against another version writes nothing. A row's `version` starts at 1 and
 * every save bumps it (migration 0043). What a save may say:
 * - `{ versions: [n, …] }`: the version(s) it read (an edit form's hidden `version`, the API's
 *   `If-Match: "n"` — a list of entity tags matches any of them);
 * - `{ anyVersion: true }`: only that the row exists (`If-Match: *`);
 * - nothing: no check, the save applies as before (the API without `If-Match`).
 */
export type VersionCheck = { readonly anyVersion: true } | { readonly versions: readonly number[] };

/** Whether a save with this check may write over a row at `current` (null: no such row). */
export function versionMatches(check: VersionCheck | undefined, current: number | null): boolean {
  if (check === undefined) return true;
  if (current === null) return false;
  return 'anyVersion' in check || check.versions.includes(current);
}

/** The versions a conditional write may replace (null: any, no condition). */
export const versionsOf = (check: VersionCheck | undefined): readonly number[] | null => (check === undefined || 'anyVersion' in check ? null : check.versions);

/**
 * 412/41200: the stored row is not at the version the save was made against (or is not there).
 * The web forms answer it as a 409 page with both versions (docs/web.md, "Edit conflicts").
 */
export const staleVersion = (what: string, current: number | null) =>
  new AppError(
    'precondition_failed',
    41200,
    current === null
      ? `${what} does not exist, so If-Match cannot match it; nothing was written`
      : `${what} has changed since you read it (it is at version ${current} now); nothing was written: read it again and send its ETag in If-Match`,
  );

/** Throws `staleVersion` unless the check allows writing over `current`. */
export function checkVersion(check: VersionCheck | undefined, what: string, current: number | null): void {
  if (!versionMatches(check, current)) throw staleVersion(what, current);
}

/**
 * An edit form's hidden `version` (the version it was read at) as the check its save makes. A form
 * without one (or with text that is no version) is refused, not saved unchecked: every edit form
 * we render carries it, so its absence means a page from before the field existed.
 */
export function formVersion(text: string | undefined): VersionCheck {
  const value = text?.trim() ?? '';
  if (!/^[1-9]\d{0,14}$/.test(value)) throw fieldError('version', 'is missing from the form: reload the page and make your change again');
  return { versions: [Number(value)] };
}
