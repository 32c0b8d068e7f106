import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { archiveName, factDifferences, parseManifest, schemaProblem, type BackupManifest } from '../../src/domain/backup.ts';

const manifest: BackupManifest = {
  format: 'stockist-backup/1',
  createdAt: '2026-12-06T04:00:00.000Z',
  stockistVersion: '0.1.0',
  nodeVersion: 'v24.21.0',
  schemaVersion: '0041_console_list_indexes',
  dialect: 'sqlite',
  counts: { merchants: 1, orders: 3, refunds: 1, journalEntries: 4, stockRows: 5 },
  ledgerTotals: { USD: { accounts: 1, balanceCents: -2370, entries: 4, debitsCents: -2670, creditsCents: 300 } },
  withSecrets: false,
  files: { 'database/stockist.db': 'a'.repeat(64) },
};

/** SPEC §17: what a restore reads from a manifest before it touches anything. */
describe('backup manifest rules', () => {
  it('names archives by dialect and UTC second', () => {
    assert.equal(archiveName('sqlite', new Date('2026-12-06T04:05:06.789Z')), 'stockist-sqlite-20261206T040506Z.tar');
    assert.equal(archiveName('postgres', new Date('2026-01-02T03:04:05Z')), 'stockist-postgres-20260102T030405Z.tar');
  });

  it('reads a whole manifest and says what is wrong with a bad one', () => {
    assert.deepEqual(parseManifest(JSON.stringify(manifest)), manifest);
    const bad = (edit: (m: any) => void) => {
      const m = structuredClone(manifest) as any;
      edit(m);
      return parseManifest(JSON.stringify(m));
    };
    assert.equal(parseManifest('{'), 'its manifest.json is not JSON');
    assert.equal(parseManifest('[]'), 'its manifest.json is not an object');
    assert.match(String(bad((m) => (m.format = 'other/2'))), /^its format is "other\/2", not stockist-backup\/1$/);
    assert.equal(
      bad((m) => delete m.schemaVersion),
      'its manifest has no schemaVersion',
    );
    assert.equal(
      bad((m) => (m.dialect = 'mysql')),
      'its manifest names no dialect (sqlite or postgres)',
    );
    assert.equal(
      bad((m) => (m.counts.orders = -1)),
      'its manifest has no counts',
    );
    assert.equal(
      bad((m) => (m.counts.orders = 1.5)),
      'its manifest has no counts',
    );
    assert.equal(
      bad((m) => (m.ledgerTotals.USD.balanceCents = '1')),
      'its manifest has no ledger totals',
    );
    assert.equal(
      bad((m) => delete m.withSecrets),
      'its manifest does not say whether it holds secrets',
    );
    assert.equal(
      bad((m) => (m.files['../etc/passwd'] = 'a'.repeat(64))),
      'its manifest lists a bad member name "../etc/passwd"',
    );
    assert.equal(
      bad((m) => (m.files['/abs'] = 'a'.repeat(64))),
      'its manifest lists a bad member name "/abs"',
    );
    assert.equal(
      bad((m) => (m.files['database/stockist.db'] = 'xyz')),
      'its manifest has no SHA-256 for database/stockist.db',
    );
    assert.equal(
      bad((m) => (m.files = {})),
      'its manifest lists no database/stockist.db',
    );
    assert.equal(
      bad((m) => (m.dialect = 'postgres')),
      'its manifest lists no database/stockist.pgdump',
    );
  });

  it('refuses schemas of a newer build and names it', () => {
    const known = ['0040_delivery_responses_order_notes', '0041_console_list_indexes'];
    assert.equal(schemaProblem('0041_console_list_indexes', known, known[1]), null);
    assert.equal(schemaProblem('0040_delivery_responses_order_notes', known, known[1]), null);
    assert.match(
      String(schemaProblem('0042_backups', known, known[1])),
      /^it was made by a newer Stockist \(schema 0042_backups; this build knows up to 0041_console_list_indexes\)/,
    );
    assert.match(String(schemaProblem('0039_unheard_of', known, known[1])), /^its schema 0039_unheard_of is not a migration this build knows/);
  });

  it('lists every count and ledger total that differs', () => {
    assert.deepEqual(factDifferences(manifest, manifest), []);
    const found = structuredClone(manifest);
    found.counts.orders = 2;
    found.ledgerTotals.USD.creditsCents = 0;
    found.ledgerTotals.EUR = { accounts: 1, balanceCents: 0, entries: 0, debitsCents: 0, creditsCents: 0 };
    assert.deepEqual(factDifferences(manifest, found), [
      'orders: the manifest says 3, the restored database holds 2',
      'ledger USD creditsCents: the manifest says 300, the restored database holds 0',
      'ledger EUR accounts: the manifest says nothing, the restored database holds 1',
      'ledger EUR balanceCents: the manifest says nothing, the restored database holds 0',
      'ledger EUR entries: the manifest says nothing, the restored database holds 0',
      'ledger EUR debitsCents: the manifest says nothing, the restored database holds 0',
      'ledger EUR creditsCents: the manifest says nothing, the restored database holds 0',
    ]);
  });
});
