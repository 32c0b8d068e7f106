import { sql } from 'kysely';
import type { MigrationContext } from './helpers.ts';

/**
 * Issue 41 item 6: until now every order was written with `currency_code` 'USD', whatever
 * SUPPLIER_CURRENCY said, while its charge was posted in the account's currency — so a supplier
 * that ran in EUR has orders that say USD and charges in EUR. Each such order takes the currency
 * it was charged in (its `order:<id>` entry, found by the unique `cause` index). Orders placed
 * before the ledger have no charge and keep theirs (USD: there was no other then).
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await sql`update orders set currency_code = (select e.currency from journal_entries e where e.cause = 'order:' || orders.id)
    where exists (select 1 from journal_entries e where e.cause = 'order:' || orders.id and e.currency <> orders.currency_code)`.execute(db);
}
