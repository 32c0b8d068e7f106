import { sql } from 'kysely';
import type { MigrationContext } from './helpers.ts';

const TABLES = ['products', 'order_items', 'refund_items'] as const;

/**
 * SPEC §1 Text: SKUs are stored and compared in Unicode NFC. Rows written before the rule may hold
 * another form; they are rewritten here (only SKUs with a character outside printable ASCII can
 * differ, so the databases filter those out first). Two products whose SKUs differ only in their
 * normalisation cannot both keep their SKU: the migration stops and names them, and the operator
 * merges them by hand (nothing is guessed about which one orders meant).
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  const nonAscii = dialect === 'sqlite' ? sql<boolean>`sku glob '*[^ -~]*'` : sql<boolean>`sku !~ '^[ -~]*$'`;
  for (const table of TABLES) {
    const rows = (await db.selectFrom(table).select(['id', 'sku']).where(nonAscii).orderBy('id').execute()) as { id: number; sku: string }[];
    for (const row of rows) {
      const nfc = row.sku.normalize('NFC');
      if (nfc === row.sku) continue;
      if (table === 'products') {
        const twin = await db.selectFrom('products').select('id').where('sku', '=', nfc).executeTakeFirst();
        if (twin) {
          throw new Error(
            `products ${twin.id} and ${row.id} have SKUs that differ only in Unicode normalisation (${JSON.stringify(nfc)}); merge them into one product, then start again`,
          );
        }
      }
      await db.updateTable(table).set({ sku: nfc }).where('id', '=', row.id).execute();
    }
  }
}
