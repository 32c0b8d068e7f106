import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isAssignedCountry } from '../../src/domain/countries.ts';
import { parseId } from '../../src/domain/ids.ts';
import { MAX_ORDER_CENTS, formatCents, orderTotalProblem } from '../../src/domain/money.ts';
import { canonicalSku, textProblem } from '../../src/domain/text.ts';
import { parseDocument } from '../../src/schemas/validate.ts';
import { ImportBody } from '../../src/schemas/admin.ts';
import { coerceValue } from '../../src/schemas/common.ts';
import { parseSkuList } from '../../src/services/stock-query.service.ts';
import { AppError } from '../../src/domain/errors.ts';
import { httpStatus } from '../../src/http/errors.ts';

describe('SPEC §1 Text rule', () => {
  it('accepts well-formed text, surrogate pairs included', () => {
    for (const ok of ['', 'plain', 'Café', 'e\u0301', '𝔘𝔫𝔦 🧨', '\u202e', '\u00a0', 'a b']) assert.equal(textProblem(ok), null, JSON.stringify(ok));
  });
  it('refuses NUL, C0, DEL and C1 controls, and lone surrogates of either half', () => {
    for (const bad of ['\u0000', 'a\u0001', '\u001f', '\u007f', '\u0080', '\u009f', 'a\tb', 'a\nb', 'a\rb', '\ud800', 'x\udfff', '\udc00\ud800']) {
      assert.notEqual(textProblem(bad), null, JSON.stringify(bad));
    }
    assert.equal(textProblem('ab\u0000'), 'must not contain control characters (U+0000 at position 2)');
    assert.equal(textProblem('\ud83d'), 'is not valid Unicode (a lone surrogate U+D83D at position 0)');
  });
  it('allows tab and line ends in multi-line text only', () => {
    assert.equal(textProblem('a\tb\nc\r\n', true), null);
    assert.match(textProblem('a\u0000', true)!, /only tab and newline/);
    assert.notEqual(textProblem('\u000b', true), null, 'vertical tab is not a line end');
    assert.notEqual(textProblem('\ud800', true), null);
  });
});

describe('canonical SKUs, countries, ids', () => {
  it('stores and compares SKUs in NFC, also in skus= lists', () => {
    assert.equal(canonicalSku('CAFE\u0301'), 'CAF\u00c9');
    assert.deepEqual(parseSkuList('CAFE\u0301, CAF\u00c9 ,,X'), ['CAF\u00c9', 'X']);
    assert.deepEqual(coerceValue('sku', 'e\u0301'), { ok: true, value: '\u00e9' });
  });
  it('knows the assigned ISO 3166-1 alpha-2 codes', () => {
    for (const code of ['CN', 'us', 'De', 'GB', 'AQ', 'SS', 'BQ']) assert.equal(isAssignedCountry(code), true, code);
    for (const code of ['ZZ', 'XK', 'UK', 'AA', 'QM', 'EU', 'AN', 'C', 'USA']) assert.equal(isAssignedCountry(code), false, code);
    assert.deepEqual(coerceValue('country', 'us'), { ok: true, value: 'US' });
    assert.equal(coerceValue('country', 'zz').ok, false);
    assert.deepEqual(coerceValue('countryOrAny', '*'), { ok: true, value: '*' });
  });
  it('parses ids from 1 to 2^53 − 1 and nothing else', () => {
    assert.equal(parseId('1'), 1);
    assert.equal(parseId('007'), 7);
    assert.equal(parseId('9007199254740991'), 9007199254740991);
    for (const bad of ['0', '', '-1', '1.0', '1e3', '0x1', ' 1', '9007199254740992', '9007199254740993', '12345678901234567'])
      assert.equal(parseId(bad), null, bad);
    // Parsed once in the schema: the handler gets the number, never the text (Structure II, item 2).
    assert.deepEqual(coerceValue('id', '0042'), { ok: true, value: 42 });
    assert.equal(coerceValue('id', '9007199254740993').ok, false);
    // A merchant route's id that names no row becomes 0 (404); text the string's own pattern refuses stays, for it to answer 400.
    assert.deepEqual(coerceValue('lookupId', '0042', { pattern: '^[0-9]{1,18}$' }), { ok: true, value: 42 });
    assert.deepEqual(coerceValue('lookupId', '99999999999999999', { pattern: '^[0-9]{1,18}$' }), { ok: true, value: 0 });
    assert.deepEqual(coerceValue('lookupId', 'abc', { pattern: '^[0-9]{1,18}$' }), { ok: true, value: 'abc' });
    assert.deepEqual(coerceValue('lookupId', 'abc', { maxLength: 40 }), { ok: true, value: 0 });
    assert.deepEqual(coerceValue('lookupId', 'x'.repeat(41), { maxLength: 40 }), { ok: true, value: 'x'.repeat(41) });
  });
});

describe('money bounds (SPEC §4.4)', () => {
  it('takes an order up to 10^10 minor units exactly, and refuses past it even when the total is not exact', () => {
    assert.equal(orderTotalProblem(MAX_ORDER_CENTS - 100, 100), null);
    assert.equal(orderTotalProblem(MAX_ORDER_CENTS, 1), "the order's final amount would be 100000000.01; at most 100000000.00 is accepted");
    assert.match(orderTotalProblem(1e9 * 1e11, 0)!, /more than 100000000\.00/);
    assert.equal(formatCents(5), '0.05');
    assert.deepEqual(coerceValue('cents', '100000000.00'), { ok: true, value: MAX_ORDER_CENTS });
    assert.equal(coerceValue('cents', '100000000.01').ok, false);
  });
});

describe('documents outside HTTP (CLI import, demo seed)', () => {
  it('go through the same Text rule and trimming as request bodies', () => {
    assert.deepEqual(parseDocument(ImportBody, { products: [{ sku: ' CAFE\u0301 ', name: ' Mug ', price: 1, weightGrams: 1 }] }), {
      products: [{ sku: 'CAF\u00c9', name: 'Mug', price: 100, weightGrams: 1 }],
    });
    assert.throws(
      () => parseDocument(ImportBody, { warehouses: [{ warehouseCode: 'W\u0000', name: 'W', countryCode: 'CN' }] }),
      (e: unknown) => e instanceof AppError && httpStatus(e) === 400 && e.errors?.[0]?.field === 'warehouses[0].warehouseCode',
    );
  });
});
