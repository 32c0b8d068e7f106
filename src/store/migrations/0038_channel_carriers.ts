import type { MigrationContext } from './helpers.ts';

/**
 * Each logistics channel names the carriers a warehouse ships it with (issue 29, 10): the ship
 * form offers them to pick from. `carriers` is a JSON array of names ('[]': none listed, the form
 * asks for one typed in). `tracking_url_template` makes a tracking number a link on the order
 * pages: an https URL with `{trackingNo}` where the number goes; null: no link.
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('channels')
    .addColumn('carriers', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema.alterTable('channels').addColumn('tracking_url_template', 'text').execute();
}
