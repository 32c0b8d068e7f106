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

export async function upsertWarehouse(db: Trx, w: WarehouseInput, now: number): Promise<Warehouse> {
  return db
    .insertInto('warehouses')
    .values({ code: w.code, name: w.name, country_code: w.countryCode, country_name: w.countryName, status: w.status, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc.column('code').doUpdateSet({ name: w.name, country_code: w.countryCode, country_name: w.countryName, status: w.status, updated_at: now }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
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
