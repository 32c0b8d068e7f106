import { sql } from 'kysely';
import type { MigrationContext } from './helpers.ts';

/**
 * The order search's text match (issue "Front ends III" item 8; docs/decisions.md "Order search
 * matches text through a trigram index"): an order is found by any part of its id, its custom order
 * id or its recipient, case-insensitively, through an index on each database.
 * - SQLite: `orders_search`, an FTS5 table with the trigram tokenizer, its rowid the order's id and
 *   its one column that text (contentless: the index only, the text is in `orders`), kept by
 *   triggers on `orders`, so no code path that writes an order has to remember it.
 * - PostgreSQL: a pg_trgm GIN index on the same text as an expression of the row. pg_trgm is a
 *   trusted extension; it is created in `public` when it is not there yet (a schema of its own per
 *   Stockist schema could not be: one database holds an extension once). Where it can be neither
 *   found nor created, the index is left out and the search reads the rows instead (slower, same answers).
 * The text (lower-cased, parts separated by a space) must stay the same expression as
 * `ORDER_TEXT_PG` in store/orders.repository.ts, or PostgreSQL stops using the index.
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  if (dialect === 'sqlite') {
    const text = (row: 'new' | 'old') =>
      `lower(${row}.id || ' ' || coalesce(${row}.custom_order_id, '') || ' ' || coalesce(json_extract(${row}.address, '$.recipient'), ''))`;
    await sql.raw(`create virtual table orders_search using fts5(text, content='', contentless_delete=1, tokenize='trigram')`).execute(db);
    await sql.raw(`insert into orders_search (rowid, text) select id, ${text('old').replaceAll('old.', '')} from orders`).execute(db);
    await sql
      .raw(`create trigger orders_search_insert after insert on orders begin insert into orders_search (rowid, text) values (new.id, ${text('new')}); end`)
      .execute(db);
    await sql
      .raw(
        `create trigger orders_search_update after update of custom_order_id, address on orders begin ` +
          `delete from orders_search where rowid = old.id; insert into orders_search (rowid, text) values (new.id, ${text('new')}); end`,
      )
      .execute(db);
    await sql.raw(`create trigger orders_search_delete after delete on orders begin delete from orders_search where rowid = old.id; end`).execute(db);
    return;
  }
  const installed = await sql<{
    schema: string;
  }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  let schema = installed.rows[0]?.schema;
  if (schema === undefined) {
    const creatable = await sql<{ ok: boolean }>`
      select exists (select 1 from pg_available_extensions where name = 'pg_trgm')
        and case when exists (select 1 from pg_namespace where nspname = 'public') then has_schema_privilege('public', 'CREATE') else false end as ok`.execute(
      db,
    );
    if (!creatable.rows[0]?.ok) return;
    await sql`create extension if not exists pg_trgm with schema public`.execute(db);
    schema = 'public';
  }
  await sql
    .raw(
      `create index orders_text_trgm_idx on orders using gin ((lower(id::text || ' ' || coalesce(custom_order_id, '') || ' ' || coalesce(address::json ->> 'recipient', ''))) "${schema}".gin_trgm_ops)`,
    )
    .execute(db);
}
