import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ClaimForm, ManagerClaim, ManagerClaimsPage } from '../../src/services/claims-manager.service.ts';
import { evidenceLabel, presentClaimForm, presentManagerClaim, presentManagerClaims } from '../../src/web/manager/present-claims.ts';

/** The business manager's claim models (manager/present-claims.ts): the form kept on refusal, the list's paging, what a claim offers. */

const form: ClaimForm = {
  splitId: '5000000000002',
  orderId: '1000000000001',
  status: 'shipped',
  shippedAt: 1_700_000_000_000,
  carrier: 'UPS',
  trackingCode: '1Z',
  lines: [
    { sku: 'A', name: 'Mug', shipped: 3, refunded: 0, claimedElsewhere: 1, claimable: 2 },
    { sku: 'B', name: 'Cup', shipped: 1, refunded: 0, claimedElsewhere: 0, claimable: 1 },
  ],
  closed: null,
};

const record = (status: ManagerClaim['claim']['status'], extra: Partial<ManagerClaim['claim']> = {}): ManagerClaim => ({
  claim: {
    claimNo: '9000000000001',
    orderId: '5000000000002',
    parentOrderId: '1000000000001',
    status,
    reason: 'damaged',
    resolution: 'reship',
    items: [{ sku: 'A', quantity: 2 }],
    description: null,
    evidence: [],
    amount: null,
    replacementOrderId: null,
    returnRequired: false,
    returnTracking: null,
    decisionReason: null,
    createDate: '2026-12-01T10:00:00Z',
    updateDate: '2026-12-01T10:00:00Z',
    ...extra,
  },
  split: { status: 'shipped', carrier: 'UPS', trackingCode: '1Z', shippedAt: 1_700_000_000_000 },
  names: new Map([['A', 'Mug']]),
  evidence: [{ id: 3, contentType: 'application/pdf', sizeBytes: 2_500_000 }],
  history: [{ at: 1_700_000_000_000, by: 'you', action: 'opened the claim', status: 'open', note: null }],
  currency: 'USD',
});

describe('the business manager claim models', () => {
  it('the form: each line bounded by what may be claimed; a refusal keeps what was typed and marks its fields', () => {
    const fresh = presentClaimForm(form, null, null);
    assert.deepEqual(
      fresh.lines.map((l) => [l.sku, l.claimable, l.shipped, l.quantity, l.invalid]),
      [
        ['A', 2, '3 (1 on other claims)', '', false],
        ['B', 1, '1', '', false],
      ],
    );
    assert.equal(fresh.resolutions.find((r) => r.selected)?.value, 'refund', 'refund chosen by default');
    assert.deepEqual(fresh.errors, []);
    const refused = presentClaimForm(
      form,
      { quantities: ['5', ''], reason: '', resolution: 'reship', description: 'typed', evidence: [{ id: 7, contentType: 'image/png', sizeBytes: 2048 }] },
      { reasons: ['A: at most 2 can be claimed', 'choose a reason'], fields: ['items[0].quantity', 'reason'] },
    );
    assert.equal(refused.lines[0].quantity, '5');
    assert.equal(refused.lines[0].invalid, true);
    assert.equal(refused.lines[1].invalid, false);
    assert.deepEqual(refused.invalid, { reason: true, resolution: false, description: false, evidence: false, lines: true });
    assert.equal(refused.resolutions.find((r) => r.selected)?.value, 'reship');
    assert.equal(refused.description, 'typed');
    assert.deepEqual(refused.evidence, [{ fileId: '7', label: 'PNG, 2 KB' }]);
    assert.equal(refused.action, '/manager/split-orders/5000000000002/claim');
  });

  it('evidence labels: type and size', () => {
    assert.equal(evidenceLabel('application/pdf', 2_500_000), 'PDF, 2.4 MB');
    assert.equal(evidenceLabel('image/webp', 10), 'WEBP, 1 KB');
  });

  it('the list: statuses in words, previous and next pages keep the filters, the empty state says whether filters are on', () => {
    const claim = record('awaiting_return').claim;
    const page = (pageNumber: number, total: number, list = [claim]): ManagerClaimsPage => ({ total, pageNumber, pageSize: 25, list, nextCursor: null });
    const filters = { status: 'awaiting_return', order: '', from: '', to: '' };
    const view = presentManagerClaims(page(2, 60), filters, 'USD');
    assert.equal(view.rows[0].statusText, 'Approved: send the goods back');
    assert.equal(view.next, '/manager/claims?status=awaiting_return&page=3');
    assert.equal(view.previous, '/manager/claims?status=awaiting_return&page=1');
    assert.equal(view.tools.csv, '/manager/claims.csv?status=awaiting_return');
    assert.equal(presentManagerClaims(page(3, 60), filters, 'USD').next, null);
    assert.equal(presentManagerClaims(page(1, 0, []), filters, 'USD').empty, 'No claims match.');
    assert.match(presentManagerClaims(page(1, 0, []), { status: '', order: '', from: '', to: '' }, 'USD').empty, /^No claims yet/);
  });

  it('a claim: the return form only while awaiting it and for a writer; cancel only while open; the replacement linked', () => {
    const awaiting = presentManagerClaim(record('awaiting_return', { returnRequired: true }), true);
    assert.equal(awaiting.returnForm?.action, '/manager/claims/9000000000001/return');
    assert.equal(awaiting.cancel, null);
    assert.equal(presentManagerClaim(record('awaiting_return', { returnRequired: true }), false).returnForm, null, 'a viewer');
    const open = presentManagerClaim(record('open'), true);
    assert.equal(open.cancel, '/manager/claims/9000000000001/cancel');
    assert.equal(open.returnForm, null);
    assert.equal(presentManagerClaim(record('open'), false).cancel, null);
    const reshipped = presentManagerClaim(record('reshipped', { replacementOrderId: '1000000000009' }), true);
    const link = reshipped.facts.find((f) => f.label === 'Replacement order');
    assert.ok(link && 'link' in link && link.link.href === '/manager/orders/1000000000009');
    const rejected = presentManagerClaim(record('rejected', { decisionReason: 'no damage seen' }), true);
    assert.ok(rejected.facts.some((f) => f.label === 'Reason for the decision' && 'text' in f && f.text === 'no damage seen'));
    assert.deepEqual(reshipped.evidence, [{ fileId: '3', href: '/manager/claims/files/3', label: 'Evidence 1 of 1: PDF, 2.4 MB' }]);
    // A refused return keeps what was typed.
    const typed = presentManagerClaim(record('awaiting_return', { returnRequired: true }), true, {
      carrier: 'DHL',
      trackingCode: '',
      errors: ['trackingCode: is required'],
    });
    assert.equal(typed.returnForm?.carrier, 'DHL');
    assert.deepEqual(typed.errors, ['trackingCode: is required']);
  });
});
