import { notNull, type MigrationContext } from './helpers.ts';

/**
 * The web front ends' form posts (issue 29): `web_form_keys` holds the one-time key of every form
 * that must apply once (a double click, a reload or a resubmission of the same rendered form finds
 * its key here and changes nothing), inserted in the transaction of the write it guards;
 * `web_flashes` holds what the page after a POST → 303 → GET shows once — a message, or a new
 * secret encrypted with a key only the session's cookie gives (docs/decisions.md, "Form posts").
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('web_form_keys')
    .addColumn('form_key', 'text', (c) => c.primaryKey())
    // SHA-256 of the session id (the sessions' own key): a key only replays for the session that sent it.
    .addColumn('session_hash', 'text', notNull)
    .addColumn('request_id', 'text', notNull)
    // Where the first submission's answer sent the browser (null until it answered).
    .addColumn('result_path', 'text')
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('web_form_keys_created_idx').on('web_form_keys').column('created_at').execute();

  await db.schema
    .createTable('web_flashes')
    .addColumn('session_hash', 'text', notNull)
    // What the flash is for: `notice` (any page), or a page's own one-time display (`credentials` …).
    .addColumn('slot', 'text', notNull)
    .addColumn('payload', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .addPrimaryKeyConstraint('web_flashes_pk', ['session_hash', 'slot'])
    .execute();
  await db.schema.createIndex('web_flashes_created_idx').on('web_flashes').column('created_at').execute();
}
