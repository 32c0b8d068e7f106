import type { AuditAction } from '../domain/audit.ts';
import { formatSigned } from '../domain/ledger.ts';
import { parseInstant } from '../domain/time.ts';

/**
 * An audit row's change as the audit pages show it (issue 29, item 16): one line per field,
 * `before → after`, with times as times and money as money, instead of the stored JSON.
 */

/**
 * A value as shown: text, an instant (the page renders it as every other time, `<time>` in the
 * viewer's zone), or a merchant (the console names it and links its page; services/audit.service.ts).
 */
export type AuditValue = { text: string } | { time: number } | { merchant: string; name: string };

export interface AuditFieldChange {
  /** The summary's key (`status`, `priceCents`, `SKU-A@G007` …). */
  field: string;
  /** The key in words (`price`, `expires at`); keys that are not a word (`SKU-A@G007`) as they are. */
  label: string;
  /** Null when the field is not in the row's before summary (created, or only recorded after). */
  before: AuditValue | null;
  /** Null when the field is not in the row's after summary (removed). */
  after: AuditValue | null;
  /** Both sides are there and differ: shown as `before → after`; otherwise the one value. */
  changed: boolean;
}

/** Summary keys holding minor units whatever the action (catalogue prices and fees, a cancelled split's credit). */
const isCentsKey = (key: string) => key.endsWith('Cents');
/** The account actions record balances and amounts in minor units under plain names. */
const ACCOUNT_CENTS_KEYS = new Set(['balance', 'amount', 'creditLimit', 'lowBalanceThreshold']);
/** A refund's `amount` is recorded in the currency's units (9.32), as the API gives it. */
const isRefundAmount = (action: AuditAction, key: string) => action.startsWith('refund.') && key === 'amount';

function presentValue(action: AuditAction, key: string, value: unknown): AuditValue {
  if (value === null || value === undefined) return { text: '—' };
  if (typeof value === 'boolean') return { text: value ? 'yes' : 'no' };
  if (typeof value === 'number' && (isCentsKey(key) || (action.startsWith('account.') && ACCOUNT_CENTS_KEYS.has(key))))
    return Number.isSafeInteger(value) ? { text: formatSigned(value) } : { text: String(value) };
  if (typeof value === 'number' && isRefundAmount(action, key)) return { text: value.toFixed(2) };
  if (key.endsWith('At')) {
    // Times were recorded as epoch ms (invitations, resets) or as ISO instants (tokens).
    const ms = typeof value === 'number' ? value : typeof value === 'string' ? parseInstant(value) : null;
    if (ms !== null && Number.isSafeInteger(ms)) return { time: ms };
  }
  if (typeof value === 'object') return { text: JSON.stringify(value) };
  return { text: String(value) };
}

/** `lowBalanceThreshold` → `low balance threshold`, `priceCents` → `price`; other keys unchanged. */
export function fieldLabel(key: string): string {
  if (!/^[a-z][A-Za-z]*$/.test(key)) return key;
  const words = key.replace(/Cents$/, '').replace(/([A-Z])/g, ' $1');
  return words.toLowerCase();
}

const sameValue = (a: AuditValue, b: AuditValue) => ('time' in a && 'time' in b ? a.time === b.time : 'text' in a && 'text' in b && a.text === b.text);

/**
 * The fields of an audit row's before and after summaries, in the order they were recorded
 * (before's keys, then keys only after has). A field in both that did not change is listed once.
 */
export function auditChanges(action: AuditAction, before: Record<string, unknown> | null, after: Record<string, unknown> | null): AuditFieldChange[] {
  const keys = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  return keys.map((field) => {
    const b = before && Object.hasOwn(before, field) ? presentValue(action, field, before[field]) : null;
    const a = after && Object.hasOwn(after, field) ? presentValue(action, field, after[field]) : null;
    return { field, label: fieldLabel(field), before: b, after: a, changed: b !== null && a !== null && !sameValue(b, a) };
  });
}
