import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { allocateLines, groupByWarehouse, rankWarehouses, type StockAvailability } from '../../src/domain/allocation.ts';

const w = (
  warehouseCode: string,
  countryCode: string,
  qty: number,
  enabled = true,
  warehouseId = warehouseCode.charCodeAt(0) * 100 + Number(warehouseCode.slice(-1)),
): StockAvailability => ({
  warehouseId,
  warehouseCode,
  countryCode,
  qty,
  enabled,
});
const ctx = (destinationCountry: string) => ({ destinationCountry, defaultWarehouse: 'G007' });
const pieces = (r: ReturnType<typeof allocateLines>) => (r.ok ? r.pieces.map((p) => [p.lineIndex, p.warehouseCode, p.quantity]) : r.short);

describe('allocateLines (SPEC §4.2)', () => {
  const stock = new Map([
    ['A', [w('G007', 'CN', 10), w('G006', 'CN', 4), w('US01', 'US', 3)]],
    ['B', [w('G006', 'CN', 5)]],
  ]);

  it('honours a requested warehouse that can cover the line', () => {
    assert.deepEqual(pieces(allocateLines([{ index: 0, sku: 'A', quantity: 4, warehouseCode: 'G006' }], stock, ctx('DE'))), [[0, 'G006', 4]]);
  });

  it('ignores a requested warehouse that cannot cover the line', () => {
    assert.deepEqual(pieces(allocateLines([{ index: 0, sku: 'A', quantity: 5, warehouseCode: 'G006' }], stock, ctx('DE'))), [[0, 'G007', 5]]);
    assert.deepEqual(pieces(allocateLines([{ index: 0, sku: 'A', quantity: 2, warehouseCode: 'NOPE' }], stock, ctx('DE'))), [[0, 'G007', 2]]);
  });

  it('prefers the destination country’s warehouses', () => {
    assert.deepEqual(pieces(allocateLines([{ index: 0, sku: 'A', quantity: 2 }], stock, ctx('US'))), [[0, 'US01', 2]]);
  });

  it('falls back to the default warehouse, then the largest stock, then the code', () => {
    assert.deepEqual(pieces(allocateLines([{ index: 0, sku: 'A', quantity: 1 }], stock, ctx('DE'))), [[0, 'G007', 1]]);
    const noDefault = new Map([['C', [w('X002', 'CN', 5), w('X001', 'CN', 5), w('Y001', 'CN', 9)]]]);
    assert.deepEqual(
      rankWarehouses(noDefault.get('C')!, ctx('DE')).map((x) => x.warehouseCode),
      ['Y001', 'X001', 'X002'],
    );
  });

  it('splits a line across warehouses', () => {
    assert.deepEqual(pieces(allocateLines([{ index: 0, sku: 'A', quantity: 16 }], stock, ctx('US'))), [
      [0, 'US01', 3],
      [0, 'G007', 10],
      [0, 'G006', 3],
    ]);
  });

  it('counts several lines of one SKU together', () => {
    assert.deepEqual(
      pieces(
        allocateLines(
          [
            { index: 0, sku: 'A', quantity: 9 },
            { index: 1, sku: 'A', quantity: 5 },
          ],
          stock,
          ctx('DE'),
        ),
      ),
      [
        [0, 'G007', 9],
        // The default warehouse still ranks first with its last unit.
        [1, 'G007', 1],
        [1, 'G006', 4],
      ],
    );
    const r = allocateLines(
      [
        { index: 0, sku: 'A', quantity: 10 },
        { index: 1, sku: 'A', quantity: 10 },
      ],
      stock,
      ctx('DE'),
    );
    assert.deepEqual(r, { ok: false, short: [{ lineIndex: 1, sku: 'A', requested: 10, available: 7 }] });
  });

  it('lists every short line and allocates nothing', () => {
    const r = allocateLines(
      [
        { index: 0, sku: 'B', quantity: 6 },
        { index: 1, sku: 'A', quantity: 1 },
        { index: 2, sku: 'Z', quantity: 1 },
      ],
      stock,
      ctx('DE'),
    );
    assert.deepEqual(r, {
      ok: false,
      short: [
        { lineIndex: 0, sku: 'B', requested: 6, available: 5 },
        { lineIndex: 2, sku: 'Z', requested: 1, available: 0 },
      ],
    });
  });

  it('never draws from a disabled warehouse', () => {
    const s = new Map([['A', [w('G007', 'CN', 10, false), w('G006', 'CN', 2)]]]);
    assert.deepEqual(pieces(allocateLines([{ index: 0, sku: 'A', quantity: 3 }], s, ctx('CN'))), [{ lineIndex: 0, sku: 'A', requested: 3, available: 2 }]);
    assert.deepEqual(pieces(allocateLines([{ index: 0, sku: 'A', quantity: 2, warehouseCode: 'G007' }], s, ctx('CN'))), [[0, 'G006', 2]]);
  });

  it('groups pieces by warehouse in first-use order', () => {
    const r = allocateLines(
      [
        { index: 0, sku: 'B', quantity: 1 },
        { index: 1, sku: 'A', quantity: 12 },
      ],
      stock,
      ctx('DE'),
    );
    assert.ok(r.ok);
    assert.deepEqual(
      groupByWarehouse(r.pieces).map((g) => [g.warehouseCode, g.pieces.length]),
      [
        ['G006', 2],
        ['G007', 1],
      ],
    );
  });
});
