import { CurrencyChangeRefused, currencyChangeProblem } from '../domain/money.ts';
import type { Db } from '../store/db.ts';
import { moneyCurrency, setAccountsCurrency } from '../store/ledger.repository.ts';

/**
 * Issue 41 item 6, at start-up (the server of every role, and the commands that open the
 * database): the configured SUPPLIER_CURRENCY must be the currency the database's money is in.
 * Refused with one line naming both when it is not; a database without money yet takes the
 * configured one, accounts already opened (all at zero) included. Returns what the database holds
 * money in now, or null when none has moved.
 */
export async function checkSupplierCurrency(db: Db, configured: string): Promise<string | null> {
  return db.transaction().execute(async (trx) => {
    const stored = await moneyCurrency(trx);
    const problem = currencyChangeProblem(configured, stored);
    if (problem) throw new CurrencyChangeRefused(problem);
    if (stored === null) await setAccountsCurrency(trx, configured);
    return stored;
  });
}
