import type { Handle, Trx } from './db.ts';
import type { WarehousesTable } from './schema.ts';
import type { Selectable } from 'kysely';

export type Warehouse = Selectable<WarehousesTable>;

export interface WarehouseInput {
  code: string;
  name: string;
  countryCode: string;
  countryName: string;
  status: number;
}

/** Creates or replaces a warehouse, bumping its version; `onlyAtVersions` as `upsertProduct`'s (undefined: not written). */
export async function upsertWarehouse(
  db: Trx,
  w: WarehouseInput,
  now: number,
  onlyAtVersions: readonly number[] | null = null,
): Promise<Warehouse | undefined> {
  return db
    .insertInto('warehouses')
    .values({ code: w.code, name: w.name, country_code: w.countryCode, country_name: w.countryName, status: w.status, created_at: now, updated_at: now })
    .onConflict((oc) => {
      const update = oc.column('code').doUpdateSet((eb) => ({
        name: w.name,
        country_code: w.countryCode,
        country_name: w.countryName,
        status: w.status,
        updated_at: now,
        version: eb('warehouses.version', '+', 1),
      }));
      return onlyAtVersions === null ? update : update.where('warehouses.version', 'in', [...onlyAtVersions]);
    })
    .returningAll()
    .executeTakeFirst();
}

export const listWarehouses = (db: Handle) => db.selectFrom('warehouses').selectAll().orderBy('id').execute();

/** code → warehouse, for the codes that exist. */
export async function warehousesByCode(db: Handle, codes: string[]): Promise<Map<string, Warehouse>> {
  if (codes.length === 0) return new Map();
  const rows = await db
    .selectFrom('warehouses')
    .selectAll()
    .where('code', 'in', [...new Set(codes)])
    .execute();
  return new Map(rows.map((r) => [r.code, r]));
}
