import { sql } from 'kysely';
import type { MigrationContext } from './helpers.ts';

/**
 * The order search's text index without the order id (docs/decisions.md "Order search by text at
 * 1M orders"): a part of an order id is matched as ranges of the primary key (domain/id-ranges.ts),
 * so the indexes hold the custom order id and the recipient only — lower-cased, joined by a space.
 * With the id in them every order had the trigrams `100`, `000`, `001`…, and a term of digits read
 * a million entries per trigram on both databases.
 * - SQLite: `orders_search` (FTS5, trigram) made again with the new text, its triggers too.
 * - PostgreSQL: `orders_search_trgm_idx` on the new text replaces `orders_text_trgm_idx`; the
 *   expression must stay `ORDER_TEXT_PG` in store/orders.repository.ts. Left out, like 0047's,
 *   where pg_trgm is neither installed nor creatable (0047 then made no index either).
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  if (dialect === 'sqlite') {
    const text = (row: string) => `lower(coalesce(${row}custom_order_id, '') || ' ' || coalesce(json_extract(${row}address, '$.recipient'), ''))`;
    for (const trigger of ['orders_search_insert', 'orders_search_update', 'orders_search_delete']) {
      await sql.raw(`drop trigger if exists ${trigger}`).execute(db);
    }
    await sql.raw('drop table if exists orders_search').execute(db);
    await sql.raw(`create virtual table orders_search using fts5(text, content='', contentless_delete=1, tokenize='trigram')`).execute(db);
    await sql.raw(`insert into orders_search (rowid, text) select id, ${text('')} from orders`).execute(db);
    await sql
      .raw(`create trigger orders_search_insert after insert on orders begin insert into orders_search (rowid, text) values (new.id, ${text('new.')}); end`)
      .execute(db);
    await sql
      .raw(
        `create trigger orders_search_update after update of custom_order_id, address on orders begin ` +
          `delete from orders_search where rowid = old.id; insert into orders_search (rowid, text) values (new.id, ${text('new.')}); end`,
      )
      .execute(db);
    await sql.raw(`create trigger orders_search_delete after delete on orders begin delete from orders_search where rowid = old.id; end`).execute(db);
    return;
  }
  const installed = await sql<{
    schema: string;
  }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  const schema = installed.rows[0]?.schema;
  await sql`drop index if exists orders_text_trgm_idx`.execute(db);
  await sql`drop index if exists orders_search_trgm_idx`.execute(db);
  if (schema === undefined) return;
  await sql
    .raw(
      `create index orders_search_trgm_idx on orders using gin ((lower(coalesce(custom_order_id, '') || ' ' || coalesce(address::json ->> 'recipient', ''))) "${schema}".gin_trgm_ops)`,
    )
    .execute(db);
}
