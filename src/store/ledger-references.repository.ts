import { sql } from 'kysely';
import type { EntryRow } from './ledger.repository.ts';
import type { MerchantScope } from './tenancy.ts';

/**
 * A top-up of the account whose `reference` equals this one but for letter case, in the merchant's
 * scope. Top-ups recorded before references were folded into their cause (docs/money.md) carry the
 * reference as typed; this finds them. `lower()` folds A–Z alike on both databases (SQLite's folds
 * nothing else), so ASCII references — what banks use — match whatever their case. Reads the
 * account's top-ups by the partial type index (`type <> 'order_charge'`, migration 0035).
 */
export async function topUpByReferenceIgnoringCase(scope: MerchantScope, accountId: number, reference: string): Promise<EntryRow | undefined> {
  return scope
    .selectFrom('journal_entries')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('type', '=', 'top_up')
    .where('type', '<>', 'order_charge')
    .where(sql<string>`lower(reference)`, '=', sql<string>`lower(${reference})`)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}
