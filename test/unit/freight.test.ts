import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { channelsFor, chooseChannel, deliveryTime, freightCents, quoteByType, type ChannelOffer } from '../../src/domain/freight.ts';

const ch = (
  code: string,
  type: ChannelOffer['type'],
  warehouseCodes: string[],
  countries: string[],
  baseFeeCents: number,
  perKgFeeCents: number,
  min: number,
  max: number,
): ChannelOffer => ({
  code,
  name: code,
  type,
  warehouseCodes,
  countries,
  baseFeeCents,
  perKgFeeCents,
  deliveryDaysMin: min,
  deliveryDaysMax: max,
});
const CHANNELS = [
  ch('STD', 'Standard', ['G007', 'US01'], ['*'], 200, 150, 6, 10),
  ch('STD2', 'Standard', ['G007'], ['US'], 100, 300, 8, 12),
  ch('EXP', 'Express', ['G007'], ['*'], 800, 950, 3, 5),
  ch('US-EXP', 'Express', ['US01'], ['US'], 900, 250, 2, 3),
];

describe('freight (SPEC §4.5)', () => {
  it('charges base plus per-kg of the weight, rounded up to the cent', () => {
    assert.equal(freightCents(CHANNELS[0], 1000), 350);
    assert.equal(freightCents(CHANNELS[0], 1), 201);
    assert.equal(freightCents(CHANNELS[0], 0), 200);
    assert.equal(freightCents(CHANNELS[2], 333), 800 + Math.ceil(950 * 0.333));
    assert.equal(deliveryTime(CHANNELS[0]), '6~10 Business Days');
  });

  it('chooses the requested channel when it serves the group', () => {
    assert.equal(chooseChannel(CHANNELS, 'G007', 'US', 500, { requestedCode: 'EXP', requestedType: 'Standard' })?.code, 'EXP');
  });

  it('falls back to the cheapest of the requested type, then to Standard', () => {
    assert.equal(chooseChannel(CHANNELS, 'US01', 'US', 500, { requestedCode: 'EXP', requestedType: 'Express' })?.code, 'US-EXP');
    // STD: 200 + 75 = 275 at 500 g; STD2: 100 + 150 = 250.
    assert.equal(chooseChannel(CHANNELS, 'G007', 'US', 500, { requestedCode: null, requestedType: 'Standard' })?.code, 'STD2');
    // At 2 kg STD is cheaper: 500 vs 700.
    assert.equal(chooseChannel(CHANNELS, 'G007', 'US', 2000, { requestedCode: 'NOPE', requestedType: 'Standard' })?.code, 'STD');
    assert.equal(chooseChannel(CHANNELS, 'US01', 'DE', 100, { requestedCode: null, requestedType: 'Expedited' })?.code, 'STD');
  });

  it('returns null when no channel serves the group', () => {
    assert.equal(chooseChannel(CHANNELS, 'G006', 'US', 100, { requestedCode: null, requestedType: 'Standard' }), null);
  });

  it('lists serving channels by delivery time then price', () => {
    assert.deepEqual(
      channelsFor(CHANNELS, 'G007', 'US', 500).map((c) => c.code),
      ['EXP', 'STD', 'STD2'],
    );
  });

  it('quotes per channel type over every group', () => {
    const q = quoteByType(
      CHANNELS,
      [
        { warehouseCode: 'G007', weightGrams: 1000 },
        { warehouseCode: 'US01', weightGrams: 1000 },
      ],
      'US',
      ['Standard', 'Express', 'Expedited'],
    );
    assert.deepEqual(q, [
      { channelType: 'Standard', freightCents: 350 + 350, deliveryDaysMin: 6, deliveryDaysMax: 10 },
      { channelType: 'Express', freightCents: 1750 + 1150, deliveryDaysMin: 3, deliveryDaysMax: 5 },
    ]);
  });
});
