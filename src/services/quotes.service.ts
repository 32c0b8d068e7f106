import { CHANNEL_TYPES } from '../domain/channels.ts';
import { AppError } from '../domain/errors.ts';
import { channelsFor, deliveryTime, freightCents, quoteByType } from '../domain/freight.ts';
import { amountOf, moneyOf, orderTotalProblem, type Money } from '../domain/money.ts';
import { fieldError } from '../domain/errors.ts';
import type { QuoteBody } from '../schemas/orders.ts';
import { listChannels } from '../store/channels.repository.ts';
import type { OrderDeps } from './orders.service.ts';
import { allocateForQuote, toOffer } from './orders.service.ts';

const noChannel = (warehouses: string[], country: string) =>
  new AppError(
    'unprocessable',
    42202,
    `no logistics channel ships from ${warehouses.join(', ')} to ${country}`,
    warehouses.map((w) => ({ field: 'shipToCountry', message: `no channel from ${w} to ${country}`, warehouseCode: w, country })),
  );

/** The allocation an order would get (a dry run: nothing is reserved), with every channel per group. */
async function dryRun(deps: OrderDeps, body: QuoteBody) {
  const country = body.shipToCountry.toUpperCase();
  const lines = body.products.map((p, index) => ({ index, sku: p.sku, quantity: p.quantity, warehouseCode: p.warehouseCode ?? null }));
  const { groups, subtotalCents } = await allocateForQuote(deps.store.db, lines, country, deps.config, 'products');
  const offers = (await listChannels(deps.store.db)).map(toOffer);
  return { country, groups, offers, subtotalCents };
}

/** A quote's freight: the amount and, beside it, the supplier's currency it is in (SPEC §4.5). */
const freightQuote = (freight: Money) => ({ estimatedFreight: amountOf(freight), estimatedFreightCurrency: freight.currency });

/** SPEC §4.4 for quotes: an order with this freight could not be placed, so it is not quoted either. */
function checkTotal(subtotalCents: number, freightCents: number) {
  const tooLarge = orderTotalProblem(subtotalCents, freightCents);
  if (tooLarge) throw fieldError('products', tooLarge);
}

/** POST /v2/order/orders/channel: per warehouse group, every serving channel by delivery time then price. */
export async function quoteChannels(deps: OrderDeps, body: QuoteBody) {
  const { country, groups, offers, subtotalCents } = await dryRun(deps, body);
  const perGroup = groups.map((g) => ({ g, channels: channelsFor(offers, g.warehouseCode, country, g.weightGrams) }));
  const unserved = perGroup.filter((x) => x.channels.length === 0).map((x) => x.g.warehouseCode);
  if (unserved.length) throw noChannel(unserved, country);
  for (const { g, channels } of perGroup) for (const c of channels) checkTotal(subtotalCents, freightCents(c, g.weightGrams));
  return perGroup.flatMap(({ g, channels }) =>
    channels.map((c) => ({
      channelCode: c.code,
      channelNameEn: c.name,
      channelType: c.type,
      warehouseCode: g.warehouseCode,
      ...freightQuote(moneyOf(freightCents(c, g.weightGrams), deps.config.supplierCurrency)),
      deliveryTime: deliveryTime(c),
    })),
  );
}

/** POST /v2/order/orders/automaticSplit/channel: one entry per channel type that serves every group. */
export async function quoteChannelTypes(deps: OrderDeps, body: QuoteBody) {
  const { country, groups, offers, subtotalCents } = await dryRun(deps, body);
  const quotes = quoteByType(offers, groups, country, CHANNEL_TYPES);
  if (quotes.length === 0)
    throw noChannel(
      groups.map((g) => g.warehouseCode),
      country,
    );
  for (const q of quotes) checkTotal(subtotalCents, q.freightCents);
  return quotes.map((q) => ({
    channelType: q.channelType,
    ...freightQuote(moneyOf(q.freightCents, deps.config.supplierCurrency)),
    deliveryTime: `${q.deliveryDaysMin}~${q.deliveryDaysMax} Business Days`,
  }));
}
