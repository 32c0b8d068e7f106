import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ConsoleClaim } from '../../src/services/claims-console.service.ts';
import { presentClaim } from '../../src/web/console/present-claims.ts';

/** The console's claim page model (console/present-claims.ts): safe evidence, the decisions a role and state allow. */

const base = (status: ConsoleClaim['claim']['status'], evidence: ConsoleClaim['evidence'] = []): ConsoleClaim => ({
  claim: {
    claimNo: '9000000000001',
    orderId: '5000000000002',
    parentOrderId: '4000000000001',
    status,
    reason: 'not_received',
    resolution: 'refund',
    items: [{ sku: 'A', quantity: 2 }],
    description: 'never came',
    evidence: evidence.map((e) => String(e.id)),
    amount: null,
    replacementOrderId: null,
    returnRequired: false,
    returnTracking: null,
    decisionReason: null,
    createDate: '2026-12-01T10:00:00Z',
    updateDate: '2026-12-01T10:00:00Z',
  },
  merchant: { id: 7, name: 'Shop' },
  split: { id: 5000000000002, status: 'shipped', warehouseCode: 'G007', carrier: 'UPS', trackingCode: '1Z', shippedAt: 1_700_000_000_000 },
  lines: [{ sku: 'A', unitCents: 932, quantity: 3, refunded: 0, claimedHere: 2, claimedElsewhere: 1 }],
  evidence,
  history: [{ at: 1_700_000_000_000, by: 'the merchant', action: 'opened', status: 'open', note: null }],
  ageSeconds: 50 * 3600,
  overSla: true,
  slaHours: 48,
  warehouseCodes: ['G006', 'G007'],
});

describe('the console claim page (views.claim → ClaimView)', () => {
  it('an img only for JPEG, PNG and WebP; a PDF, or any other type, is a link only', () => {
    const view = presentClaim(
      base('open', [
        { id: 1, contentType: 'image/jpeg', sizeBytes: 2048 },
        { id: 2, contentType: 'image/webp', sizeBytes: 3 * 1024 * 1024 },
        { id: 3, contentType: 'application/pdf', sizeBytes: 10 },
        { id: 4, contentType: 'image/svg+xml', sizeBytes: 10 },
      ]),
      { decide: true, receive: false },
      'EUR',
      'G007',
    );
    assert.deepEqual(
      view.evidence.map((e) => [e.fileId, e.kind, e.href]),
      [
        ['1', 'image', '/console/claims/files/1'],
        ['2', 'image', '/console/claims/files/2'],
        ['3', 'link', '/console/claims/files/3'],
        ['4', 'link', '/console/claims/files/4'],
      ],
    );
    assert.equal(view.evidence[1].label, 'Evidence 2 of 4: WEBP, 3.0 MB');
    assert.equal(view.evidence[2].label, 'Evidence 3 of 4: PDF, 1 KB');
  });

  it('offers the decisions the state allows to the role that may make them', () => {
    const support = { decide: true, receive: false };
    const warehouse = { decide: false, receive: true };
    const owner = { decide: true, receive: true };
    const actions = (status: ConsoleClaim['claim']['status'], may: typeof owner) => presentClaim(base(status), may, 'EUR', 'G007').actions;
    assert.deepEqual(actions('open', support), { approve: true, reject: true, requireReturn: true, receive: false, switchTo: null, retryReship: false });
    assert.deepEqual(actions('open', warehouse), { approve: false, reject: false, requireReturn: false, receive: false, switchTo: null, retryReship: false });
    assert.deepEqual(actions('awaiting_return', warehouse), {
      approve: false,
      reject: false,
      requireReturn: false,
      receive: true,
      switchTo: null,
      retryReship: false,
    });
    assert.deepEqual(actions('awaiting_return', owner), {
      approve: false,
      reject: false,
      requireReturn: false,
      receive: true,
      switchTo: 'reship',
      retryReship: false,
    });
    for (const s of ['credited', 'reshipped', 'rejected', 'cancelled'] as const)
      assert.deepEqual(actions(s, owner), { approve: false, reject: false, requireReturn: false, receive: false, switchTo: null, retryReship: false }, s);
  });

  it('writes money, the wait against the SLA, and the default warehouse selected', () => {
    const view = presentClaim(base('open'), { decide: true, receive: true }, 'EUR', 'G007');
    assert.equal(view.lines[0].unitPrice, '9.32 EUR');
    assert.equal(view.creditHint, '18.64 EUR');
    assert.deepEqual(
      view.facts.find((f) => f.label === 'Waiting'),
      { label: 'Waiting', text: '2 d 2 h (past the 48 h SLA)' },
    );
    assert.deepEqual(view.warehouses, [
      { value: 'G006', selected: false },
      { value: 'G007', selected: true },
    ]);
  });
});
