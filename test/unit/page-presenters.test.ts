import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseStockChange } from '../../src/domain/stock-adjustment.ts';
import { auditChanges, fieldLabel } from '../../src/present/audit.presenter.ts';
import { instantMs, timeElement, utcText } from '../../src/web/times.ts';

const AT = Date.parse('2026-05-01T14:03:07.250Z');

describe('times on pages (issue 29, item 8: one format, src/web/times.ts)', () => {
  it('writes every instant as a <time> in UTC, to the minute, with the second in its title', () => {
    const html = '<time datetime="2026-05-01T14:03:07Z" title="2026-05-01 14:03:07 UTC">2026-05-01 14:03 UTC</time>';
    assert.equal(timeElement(AT), html, 'epoch ms (the store)');
    assert.equal(timeElement('2026-05-01T14:03:07Z'), html, 'an ISO instant (the presenters)');
    assert.equal(timeElement('2026-05-01T16:03:07+02:00'), html, 'an offset is turned into UTC');
    assert.equal(timeElement(String(AT)), html, 'a digits-only string is epoch ms');
    assert.equal(timeElement(new Date(AT)), html);
  });

  it('says what stands for a missing time, and never prints markup it was given', () => {
    assert.equal(timeElement(null), '—');
    assert.equal(timeElement(undefined, 'never'), 'never');
    assert.equal(timeElement('<b>soon</b>'), '&#60;b&#62;soon&#60;/b&#62;');
  });

  it('reads epoch ms and ISO instants, and nothing else', () => {
    assert.equal(instantMs('2026-05-01T14:03:07.250Z'), AT);
    assert.equal(instantMs(AT), AT);
    assert.equal(instantMs('yesterday'), null);
    assert.equal(instantMs(Number.NaN), null);
    assert.equal(utcText(AT), '2026-05-01 14:03 UTC');
    assert.equal(utcText(AT, { seconds: true }), '2026-05-01 14:03:07 UTC');
  });
});

describe('audit changes as fields (issue 29, item 16: src/present/audit.presenter.ts)', () => {
  it('lists each field once, before → after where it changed, in the recorded order', () => {
    const changes = auditChanges(
      'staff.set_role',
      { email: 'a@example.com', role: 'support', status: 'active' },
      { email: 'a@example.com', role: 'owner', status: 'active' },
    );
    assert.deepEqual(changes, [
      { field: 'email', label: 'email', before: { text: 'a@example.com' }, after: { text: 'a@example.com' }, changed: false },
      { field: 'role', label: 'role', before: { text: 'support' }, after: { text: 'owner' }, changed: true },
      { field: 'status', label: 'status', before: { text: 'active' }, after: { text: 'active' }, changed: false },
    ]);
  });

  it('shows times as times, whether recorded as epoch ms or as an ISO instant', () => {
    const [invitation] = auditChanges('merchant_user.invite', null, { expiresAt: AT });
    assert.deepEqual(invitation, { field: 'expiresAt', label: 'expires at', before: null, after: { time: AT }, changed: false });
    const [revoked] = auditChanges('token.revoke', { revokedAt: null }, { revokedAt: '2026-05-01T14:03:07Z' });
    assert.deepEqual(revoked.before, { text: '—' });
    assert.deepEqual(revoked.after, { time: Math.floor(AT / 1000) * 1000 });
    assert.equal(revoked.changed, true);
  });

  it('shows money as money: minor units of prices, fees and accounts; a refund amount as recorded', () => {
    const product = auditChanges('product.save', { priceCents: 1999 }, { priceCents: 2050 });
    assert.deepEqual(product, [{ field: 'priceCents', label: 'price', before: { text: '19.99' }, after: { text: '20.50' }, changed: true }]);
    const adjust = auditChanges(
      'account.adjust',
      { environment: 'sandbox', balance: 5000 },
      { environment: 'sandbox', balance: 4850, amount: -150, reason: 'wire fee' },
    );
    assert.deepEqual(
      adjust.map((c) => [c.label, c.before, c.after]),
      [
        ['environment', { text: 'sandbox' }, { text: 'sandbox' }],
        ['balance', { text: '50.00' }, { text: '48.50' }],
        ['amount', null, { text: '-1.50' }],
        ['reason', null, { text: 'wire fee' }],
      ],
    );
    const refund = auditChanges('refund.approve', { amount: 9.3 }, { amount: 9.3 });
    assert.deepEqual(refund[0].after, { text: '9.30' });
    const credit = auditChanges('split_order.cancel', null, { creditedCents: 1250 });
    assert.deepEqual(credit[0], { field: 'creditedCents', label: 'credited', before: null, after: { text: '12.50' }, changed: false });
  });

  it('shows yes and no, stock keys as they are, and a field the change removed', () => {
    assert.deepEqual(auditChanges('merchant_user.enable_two_factor', { twoFactor: false }, { twoFactor: true })[0], {
      field: 'twoFactor',
      label: 'two factor',
      before: { text: 'no' },
      after: { text: 'yes' },
      changed: true,
    });
    const stock = auditChanges('stock.adjust', { rows: 1, omitted: 0, 'SKU-A@G007': 5 }, { rows: 1, omitted: 0, 'SKU-A@G007': 25, reason: 'count' });
    assert.deepEqual(
      stock.map((c) => [c.label, c.changed]),
      [
        ['rows', false],
        ['omitted', false],
        ['SKU-A@G007', true],
        ['reason', false],
      ],
    );
    const revoked = auditChanges('merchant_user.revoke_invitation', { role: 'admin' }, null);
    assert.deepEqual(revoked, [{ field: 'role', label: 'role', before: { text: 'admin' }, after: null, changed: false }]);
    assert.deepEqual(auditChanges('staff.sign_out', null, null), []);
  });

  it('puts keys into words', () => {
    assert.equal(fieldLabel('lowBalanceThreshold'), 'low balance threshold');
    assert.equal(fieldLabel('merchantId'), 'merchant id');
    assert.equal(fieldLabel('baseFeeCents'), 'base fee');
    assert.equal(fieldLabel('SKU-A@G007'), 'SKU-A@G007');
  });
});

describe('the change typed into the stock adjust form (issue 29, item 11: src/domain/stock-adjustment.ts)', () => {
  it('takes a whole number with or without a sign', () => {
    assert.deepEqual(parseStockChange('+20'), { delta: 20 });
    assert.deepEqual(parseStockChange(' -5 '), { delta: -5 });
    assert.deepEqual(parseStockChange('7'), { delta: 7 });
    assert.deepEqual(parseStockChange('-1000000000'), { delta: -1_000_000_000 });
  });

  it('refuses anything else with what to type instead', () => {
    for (const typed of ['+', '-', '2.5', 'abc', '+-3', '1e3', '20+', '0x10'])
      assert.deepEqual(parseStockChange(typed), { problem: `“${typed}” is not a change of stock: give a whole number such as +20 or -5` }, typed);
    assert.match((parseStockChange('') as { problem: string }).problem, /missing/);
    assert.match((parseStockChange('+0') as { problem: string }).problem, /0 changes nothing/);
    assert.match((parseStockChange('1000000001') as { problem: string }).problem, /at most 1000000000 either way/);
  });
});
