import type { Selectable } from 'kysely';
import type { Handle, Trx } from './db.ts';
import { prepared } from './prepared.ts';
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
  /** undefined: unchanged (a new channel: none). */
  carriers?: string[];
  /** undefined: unchanged (a new channel: none); null: none. */
  trackingUrlTemplate?: string | null;
}

export interface Channel extends ChannelRow {
  warehouseCodes: string[];
}

/**
 * Creates or replaces a channel and its warehouses, bumping its version; `onlyAtVersions` as
 * `upsertProduct`'s. False when the channel is at another version (nothing written).
 */
export async function upsertChannel(db: Trx, c: ChannelInput, now: number, onlyAtVersions: readonly number[] | null = null): Promise<boolean> {
  const values = {
    name: c.name,
    channel_type: c.channelType,
    countries: JSON.stringify(c.countries),
    base_fee_cents: c.baseFeeCents,
    per_kg_fee_cents: c.perKgFeeCents,
    delivery_days_min: c.deliveryDaysMin,
    delivery_days_max: c.deliveryDaysMax,
    ...(c.carriers === undefined ? {} : { carriers: JSON.stringify(c.carriers) }),
    ...(c.trackingUrlTemplate === undefined ? {} : { tracking_url_template: c.trackingUrlTemplate }),
  };
  const saved = await db
    .insertInto('channels')
    .values({ code: c.code, ...values, created_at: now, updated_at: now })
    .onConflict((oc) => {
      const update = oc.column('code').doUpdateSet((eb) => ({ ...values, updated_at: now, version: eb('channels.version', '+', 1) }));
      return onlyAtVersions === null ? update : update.where('channels.version', 'in', [...onlyAtVersions]);
    })
    .returning('id')
    .executeTakeFirst();
  if (saved === undefined) return false;
  const { id } = saved;
  await db.deleteFrom('channel_warehouses').where('channel_id', '=', id).execute();
  await db
    .insertInto('channel_warehouses')
    .values([...new Set(c.warehouseIds)].map((warehouse_id) => ({ channel_id: id, warehouse_id })))
    .execute();
  return true;
}

/** Every channel with the codes of its warehouses (sorted), in id order: one query (one round trip in an order's transaction). */
const channelRows = prepared((db) =>
  db
    .selectFrom('channels')
    .leftJoin('channel_warehouses', 'channel_warehouses.channel_id', 'channels.id')
    .leftJoin('warehouses', 'warehouses.id', 'channel_warehouses.warehouse_id')
    .selectAll('channels')
    .select('warehouses.code as warehouseCode')
    .orderBy('channels.id')
    .orderBy('warehouses.code'),
);

export async function listChannels(db: Handle): Promise<Channel[]> {
  const rows = await channelRows.all(db);
  const channels: Channel[] = [];
  for (const { warehouseCode, ...channel } of rows) {
    const last = channels.at(-1);
    const current = last?.id === channel.id ? last : channels[channels.push({ ...channel, warehouseCodes: [] }) - 1];
    if (warehouseCode !== null) current.warehouseCodes.push(warehouseCode);
  }
  return channels;
}
