import type { Selectable } from 'kysely';
import type { Handle } from './db.ts';
import type { ChannelsTable } from './schema.ts';

export type ChannelRow = Selectable<ChannelsTable>;

export interface ChannelInput {
  code: string;
  name: string;
  channelType: string;
  warehouseIds: number[];
  countries: string[];
  baseFeeCents: number;
  perKgFeeCents: number;
  deliveryDaysMin: number;
  deliveryDaysMax: number;
}

export interface Channel extends ChannelRow {
  warehouseCodes: string[];
}

export async function upsertChannel(db: Handle, c: ChannelInput, now: number): Promise<void> {
  const values = {
    name: c.name,
    channel_type: c.channelType,
    countries: JSON.stringify(c.countries),
    base_fee_cents: c.baseFeeCents,
    per_kg_fee_cents: c.perKgFeeCents,
    delivery_days_min: c.deliveryDaysMin,
    delivery_days_max: c.deliveryDaysMax,
  };
  const { id } = await db
    .insertInto('channels')
    .values({ code: c.code, ...values, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('code').doUpdateSet({ ...values, updated_at: now }))
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.deleteFrom('channel_warehouses').where('channel_id', '=', id).execute();
  await db
    .insertInto('channel_warehouses')
    .values([...new Set(c.warehouseIds)].map((warehouse_id) => ({ channel_id: id, warehouse_id })))
    .execute();
}

export async function listChannels(db: Handle): Promise<Channel[]> {
  const [channels, links] = await Promise.all([
    db.selectFrom('channels').selectAll().orderBy('id').execute(),
    db
      .selectFrom('channel_warehouses')
      .innerJoin('warehouses', 'warehouses.id', 'channel_warehouses.warehouse_id')
      .select(['channel_warehouses.channel_id as channelId', 'warehouses.code as code'])
      .orderBy('warehouses.code')
      .execute(),
  ]);
  return channels.map((c) => ({ ...c, warehouseCodes: links.filter((l) => l.channelId === c.id).map((l) => l.code) }));
}
