import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkVersion, formVersion, staleVersion, versionMatches, versionsOf } from '../../src/domain/edit-versions.ts';
import { AppError } from '../../src/domain/errors.ts';
import { HTTP_STATUS } from '../../src/http/errors.ts';
import { etagOf, ifMatchCheck } from '../../src/http/etag.ts';
import { presentEditConflict, sameValue } from '../../src/web/shared/present.ts';

/** Optimistic concurrency's rules (domain/edit-versions.ts), If-Match (http/etag.ts) and the conflict page's model (web/shared/present.ts). */
describe('version checks (domain/edit-versions.ts)', () => {
  it('no check writes over anything; a version list only over those versions; `*` over any row that exists', () => {
    assert.equal(versionMatches(undefined, 4), true);
    assert.equal(versionMatches(undefined, null), true);
    assert.equal(versionMatches({ versions: [3] }, 3), true);
    assert.equal(versionMatches({ versions: [3] }, 4), false);
    assert.equal(versionMatches({ versions: [2, 4] }, 4), true);
    assert.equal(versionMatches({ versions: [] }, 1), false);
    assert.equal(versionMatches({ anyVersion: true }, 9), true);
    assert.equal(versionMatches({ anyVersion: true }, null), false);
    assert.equal(versionMatches({ versions: [1] }, null), false);
    assert.deepEqual([versionsOf(undefined), versionsOf({ anyVersion: true }), versionsOf({ versions: [5] })], [null, null, [5]]);
  });

  it('a stale save is 412/41200 (precondition_failed) and says nothing was written', () => {
    const error = staleVersion('product A', 4);
    assert.ok(error instanceof AppError);
    assert.deepEqual([error.kind, error.code, HTTP_STATUS[error.kind]], ['precondition_failed', 41200, 412]);
    assert.match(error.message, /product A has changed since you read it \(it is at version 4 now\); nothing was written/);
    assert.match(staleVersion('product B', null).message, /does not exist/);
    assert.throws(
      () => checkVersion({ versions: [1] }, 'x', 2),
      (e: AppError) => e.code === 41200,
    );
    assert.doesNotThrow(() => checkVersion({ versions: [2] }, 'x', 2));
  });

  it('an edit form must carry its version: a positive integer, else 400 naming `version`', () => {
    assert.deepEqual(formVersion('7'), { versions: [7] });
    assert.deepEqual(formVersion(' 12 '), { versions: [12] });
    for (const bad of [undefined, '', '0', '-1', '1.5', 'x', '9'.repeat(16)])
      assert.throws(
        () => formVersion(bad),
        (e: AppError) => e.code === 40000 && e.errors?.[0].field === 'version',
        String(bad),
      );
  });
});

describe('ETag and If-Match (http/etag.ts)', () => {
  it('a version is a strong entity tag', () => assert.equal(etagOf(7), '"7"'));

  it('If-Match: absent → no check; * → exists; a list → its strong tags; weak or foreign tags match nothing', () => {
    assert.equal(ifMatchCheck(undefined), undefined);
    assert.deepEqual(ifMatchCheck('*'), { anyVersion: true });
    assert.deepEqual(ifMatchCheck('"3"'), { versions: [3] });
    assert.deepEqual(ifMatchCheck(' "3" , "5"'), { versions: [3, 5] });
    assert.deepEqual(ifMatchCheck('W/"3"'), { versions: [] });
    assert.deepEqual(ifMatchCheck('"abc"'), { versions: [] });
  });

  it('If-Match that is no entity tag list is a 400 naming the header', () => {
    for (const bad of ['3', '"3', 'W/3', '"3",', '', '* , "1"'])
      assert.throws(
        () => ifMatchCheck(bad),
        (e: AppError) => e.code === 40000 && e.errors?.[0].field === 'if-match',
        bad,
      );
  });
});

describe('the edit conflict page (views["edit-conflict"] → EditConflictView)', () => {
  it('compares field by field: text trimmed with line ends alike, numbers by value, JSON by value, sets in any order', () => {
    assert.equal(sameValue({ yours: ' Mug ', stored: 'Mug' }), true);
    assert.equal(sameValue({ yours: 'a\r\nb', stored: 'a\nb' }), true);
    assert.equal(sameValue({ yours: 'Mug', stored: 'mug' }), false);
    assert.equal(sameValue({ yours: '12.5', stored: '12.50', compare: 'number' }), true);
    assert.equal(sameValue({ yours: '', stored: '0', compare: 'number' }), false);
    assert.equal(sameValue({ yours: '{"a": [1]}', stored: '{\n  "a": [\n    1\n  ]\n}', compare: 'json' }), true);
    assert.equal(sameValue({ yours: '{"a": [1', stored: '{"a": [1]}', compare: 'json' }), false);
    assert.equal(sameValue({ yours: ['B', 'A'], stored: ['A', 'B'], compare: 'set' }), true);
    assert.equal(sameValue({ yours: 'US, CA', stored: 'CA,US', compare: 'set' }), true);
    assert.equal(sameValue({ yours: ['A'], stored: ['A', 'B'], compare: 'set' }), false);
  });

  it('lists only the fields that differ, sends every field again made against the stored version, and offers a way back', () => {
    const view = presentEditConflict({
      what: 'Product A',
      action: '/console/products/A/edit',
      discard: { href: '/console/products/A/edit', text: 'Discard mine' },
      storedVersion: 5,
      extra: [{ name: 'environment', value: 'sandbox' }],
      fields: [
        { name: 'name', label: 'Name', yours: 'Mug', stored: 'Mug, renamed' },
        { name: 'price', label: 'Price', yours: '15', stored: '15.00', compare: 'number' },
        { name: 'imageUrl', label: 'Image URL', yours: '', stored: 'https://img.example/a.jpg' },
        { name: 'codes', label: 'Warehouses', yours: ['G1', 'G2'], stored: ['G1'], compare: 'set', shown: { yours: 'two', stored: 'one' } },
      ],
    });
    assert.equal(view.title, 'Not saved: Product A changed meanwhile');
    assert.match(view.lead, /saved by someone else after you opened the form\. Nothing of yours was written/);
    assert.deepEqual(view.rows, [
      { label: 'Name', yours: 'Mug', stored: 'Mug, renamed' },
      { label: 'Image URL', yours: '(empty)', stored: 'https://img.example/a.jpg' },
      { label: 'Warehouses', yours: 'two', stored: 'one' },
    ]);
    assert.deepEqual(view.fields, [
      { name: 'environment', value: 'sandbox' },
      { name: 'name', value: 'Mug' },
      { name: 'price', value: '15' },
      { name: 'imageUrl', value: '' },
      { name: 'codes', value: 'G1' },
      { name: 'codes', value: 'G2' },
      { name: 'version', value: '5' },
    ]);
    assert.equal(view.action, '/console/products/A/edit');
    assert.deepEqual(view.discard, { href: '/console/products/A/edit', text: 'Discard mine' });
    const same = presentEditConflict({
      what: 'X',
      action: '/a',
      discard: { href: '/a', text: 'back' },
      storedVersion: 2,
      fields: [{ name: 'n', label: 'N', yours: 'a', stored: 'a' }],
    });
    assert.deepEqual(same.rows, []);
    assert.match(same.lead, /with the same values you sent/);
  });
});
