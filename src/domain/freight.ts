import type { ChannelType } from './channels.ts';

export interface ChannelOffer {
  code: string;
  name: string;
  type: ChannelType;
  warehouseCodes: string[];
  /** ISO codes, or ["*"] for every destination. */
  countries: string[];
  baseFeeCents: number;
  perKgFeeCents: number;
  deliveryDaysMin: number;
  deliveryDaysMax: number;
}

const serves = (c: ChannelOffer, warehouseCode: string, country: string) =>
  c.warehouseCodes.includes(warehouseCode) && (c.countries.includes('*') || c.countries.includes(country));

/** Base fee plus the per-kg fee for the package weight, rounded up to the cent (SPEC §4.5). */
export function freightCents(c: ChannelOffer, weightGrams: number): number {
  return c.baseFeeCents + Math.ceil((c.perKgFeeCents * weightGrams) / 1000);
}

export const deliveryTime = (c: ChannelOffer) => `${c.deliveryDaysMin}~${c.deliveryDaysMax} Business Days`;

/** Cheapest first; ties go to the faster channel, then the code. */
function byPrice(weightGrams: number) {
  return (a: ChannelOffer, b: ChannelOffer) =>
    freightCents(a, weightGrams) - freightCents(b, weightGrams) || a.deliveryDaysMax - b.deliveryDaysMax || (a.code < b.code ? -1 : 1);
}

/** Every channel serving a warehouse group, by delivery time then price (the `/channel` quote). */
export function channelsFor(channels: ChannelOffer[], warehouseCode: string, country: string, weightGrams: number): ChannelOffer[] {
  return channels
    .filter((c) => serves(c, warehouseCode, country))
    .sort((a, b) => a.deliveryDaysMin - b.deliveryDaysMin || a.deliveryDaysMax - b.deliveryDaysMax || byPrice(weightGrams)(a, b));
}

export interface ChannelChoice {
  requestedCode: string | null;
  requestedType: ChannelType;
}

/**
 * SPEC §4.2: the requested channel if it serves the group; else the cheapest of the requested
 * type; else the cheapest Standard channel; null when nothing serves the group.
 */
export function chooseChannel(channels: ChannelOffer[], warehouseCode: string, country: string, weightGrams: number, want: ChannelChoice): ChannelOffer | null {
  const serving = channels.filter((c) => serves(c, warehouseCode, country));
  const requested = want.requestedCode ? serving.find((c) => c.code === want.requestedCode) : undefined;
  if (requested) return requested;
  const cheapest = (type: ChannelType) => serving.filter((c) => c.type === type).sort(byPrice(weightGrams))[0] ?? null;
  return cheapest(want.requestedType) ?? cheapest('Standard');
}

export interface GroupForQuote {
  warehouseCode: string;
  weightGrams: number;
}

export interface TypeQuote {
  channelType: ChannelType;
  freightCents: number;
  deliveryDaysMin: number;
  deliveryDaysMax: number;
}

/**
 * The `/automaticSplit/channel` quote: for each channel type that serves every group, the sum of
 * each group's cheapest channel of that type, and the slowest group's delivery time.
 */
export function quoteByType(channels: ChannelOffer[], groups: GroupForQuote[], country: string, types: readonly ChannelType[]): TypeQuote[] {
  const out: TypeQuote[] = [];
  for (const type of types) {
    let total = 0;
    let min = 0;
    let max = 0;
    let servesAll = groups.length > 0;
    for (const g of groups) {
      const best = channels.filter((c) => c.type === type && serves(c, g.warehouseCode, country)).sort(byPrice(g.weightGrams))[0];
      if (!best) {
        servesAll = false;
        break;
      }
      total += freightCents(best, g.weightGrams);
      min = Math.max(min, best.deliveryDaysMin);
      max = Math.max(max, best.deliveryDaysMax);
    }
    if (servesAll) out.push({ channelType: type, freightCents: total, deliveryDaysMin: min, deliveryDaysMax: max });
  }
  return out;
}
