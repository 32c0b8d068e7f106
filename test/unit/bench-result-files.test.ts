import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { partialBecause, resultFiles } from '../../bench/result-files.ts';

/** SPEC §11: latest.json holds the last full run per database; a partial run never replaces it. */
describe('where a bench run writes its results', () => {
  const at = new Date('2026-11-27T10:15:30.123Z');

  it('a full run (no option that changes what is measured) goes to latest.json and <db>-full.md', () => {
    for (const db of ['sqlite', 'postgres']) {
      const files = resultFiles('/r', { db, given: { db, quick: false, 'keep-data': true } }, at);
      assert.deepEqual(files, { latestJson: '/r/latest.json', markdown: `/r/${db}-full.md`, ownJson: null });
    }
  });

  it('--only, --quick, another scale or duration each write a file of their own', () => {
    for (const given of [{ only: 'create-order' }, { quick: true }, { orders: '1000000' }, { skus: '20000' }, { duration: '5' }, { profile: true }]) {
      const files = resultFiles('/r', { db: 'sqlite', given }, at);
      assert.equal(files.latestJson, null, JSON.stringify(given));
      assert.equal(files.markdown, '/r/runs/2026-11-27T10-15-30-123Z-sqlite.md');
      assert.equal(files.ownJson, '/r/runs/2026-11-27T10-15-30-123Z-sqlite.json');
    }
  });

  it('names what made a run partial', () => {
    assert.deepEqual(partialBecause({ db: 'postgres', given: { quick: true, only: 'a,b' } }), ['quick', 'only']);
    assert.deepEqual(partialBecause({ db: 'postgres', given: { quick: false } }), []);
  });
});
