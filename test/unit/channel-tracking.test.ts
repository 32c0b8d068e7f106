import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeCarriers, trackingTemplateProblem, trackingUrl } from '../../src/domain/channels.ts';
import { MAX_PREVIEW_ROWS, emptySection, recordChange } from '../../src/domain/import-format.ts';

describe('channel carriers and tracking URL templates (issue 29, 10)', () => {
  it('takes an https URL with {trackingNo}; refuses one without it, another scheme, or no URL at all', () => {
    assert.equal(trackingTemplateProblem('https://track.example/{trackingNo}'), null);
    assert.equal(trackingTemplateProblem('https://track.example/t?n={trackingNo}&lang=en'), null);
    assert.match(trackingTemplateProblem('https://track.example/')!, /\{trackingNo\}/);
    assert.match(trackingTemplateProblem('http://track.example/{trackingNo}')!, /https/);
    assert.match(trackingTemplateProblem('javascript:alert({trackingNo})')!, /https/);
    assert.match(trackingTemplateProblem('track.example/{trackingNo}')!, /absolute https:\/\/ URL/);
  });

  it('puts the tracking number in URL-encoded, so it cannot change where the link goes', () => {
    assert.equal(trackingUrl('https://track.example/{trackingNo}', '1Z 99/..?x=1#y'), 'https://track.example/1Z%2099%2F..%3Fx%3D1%23y');
    assert.equal(trackingUrl('https://t.example/{trackingNo}/{trackingNo}', 'A1'), 'https://t.example/A1/A1');
    assert.equal(trackingUrl(null, 'A1'), null);
  });

  it('keeps each carrier once, trimmed, in the order given (the first spelling wins)', () => {
    assert.deepEqual(normalizeCarriers([' UPS ', 'dhl', '', 'ups', 'DHL', 'PostNL']), ['UPS', 'dhl', 'PostNL']);
  });
});

describe('import preview sections', () => {
  it('counts new, changed and unchanged rows and lists the changed fields before → after', () => {
    const s = emptySection();
    recordChange(s, 'A', { name: 'Mug', priceCents: 932 }, { name: 'Mug', priceCents: 1000 });
    recordChange(s, 'B', { name: 'Plate', priceCents: 450 }, { name: 'Plate', priceCents: 450 });
    recordChange(s, 'N', null, { name: 'New', imageUrl: null });
    assert.deepEqual([s.created, s.changed, s.unchanged], [1, 1, 1]);
    assert.deepEqual(s.rows, [
      { key: 'A', kind: 'changed', changes: [{ field: 'priceCents', before: 932, after: 1000 }] },
      { key: 'N', kind: 'new', changes: [{ field: 'name', before: null, after: 'New' }] },
    ]);
  });

  it(`lists at most ${MAX_PREVIEW_ROWS} rows and counts the rest`, () => {
    const s = emptySection();
    for (let i = 0; i < MAX_PREVIEW_ROWS + 7; i++) recordChange(s, `S${i}`, null, { qty: i });
    assert.equal(s.rows.length, MAX_PREVIEW_ROWS);
    assert.equal(s.created, MAX_PREVIEW_ROWS + 7);
  });
});
