import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { amountOf, currencyChangeProblem, formatMoney, isCurrencyCode, moneyOf } from '../../src/domain/money.ts';

/** Issue 41 item 6: an amount travels with its currency; the currency of a database with money is fixed. */
describe('Money and the one currency', () => {
  it('shows an amount with its currency, and renders it for the API as a number', () => {
    assert.equal(formatMoney(moneyOf(1250, 'EUR')), '12.50 EUR');
    assert.equal(formatMoney(moneyOf(-325, 'EUR')), '-3.25 EUR');
    assert.equal(formatMoney(moneyOf(0, 'JPY')), '0.00 JPY');
    assert.equal(amountOf(moneyOf(932, 'EUR')), 9.32);
  });

  it('takes ISO 4217 codes only: three capital letters', () => {
    for (const code of ['EUR', 'USD', 'CNY']) assert.equal(isCurrencyCode(code), true, code);
    for (const code of ['eur', 'EURO', 'E1R', '', '€']) assert.equal(isCurrencyCode(code), false, code);
  });

  it('lets a database without money, or with money in the same currency, be served; names both otherwise', () => {
    assert.equal(currencyChangeProblem('EUR', null), null, 'no money yet: the configured currency is taken');
    assert.equal(currencyChangeProblem('EUR', 'EUR'), null);
    assert.equal(
      currencyChangeProblem('EUR', 'USD'),
      'SUPPLIER_CURRENCY is EUR, but this database already holds money in USD, and amounts cannot change currency: ' +
        'start with SUPPLIER_CURRENCY=USD, or point DATABASE_URL at a new database for EUR',
    );
  });
});
