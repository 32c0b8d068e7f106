import type { Selectable } from 'kysely';
import type { Handle, Trx } from './db.ts';
import type { CategoriesTable } from './schema.ts';

export type Category = Selectable<CategoriesTable>;

export interface CategoryInput {
  id: number;
  name: string;
  parentId: number;
  imgUrl: string | null;
}

export async function upsertCategory(db: Trx, c: CategoryInput, now: number): Promise<Category> {
  return db
    .insertInto('categories')
    .values({ id: c.id, name: c.name, parent_id: c.parentId, img_url: c.imgUrl, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ name: c.name, parent_id: c.parentId, img_url: c.imgUrl, updated_at: now }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export const listCategories = (db: Handle) => db.selectFrom('categories').selectAll().orderBy('id').execute();

export async function existingCategoryIds(db: Handle, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('categories')
    .select('id')
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Set(rows.map((r) => r.id));
}
