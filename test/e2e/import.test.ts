import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runCli, tempDir } from './process.ts';

describe('stockist import', () => {
  it('imports files with a one-line summary off a terminal, and refuses a bad row naming its line', () => {
    const dir = tempDir();
    const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'import.db')}` };
    const write = (name: string, text: string) => (fs.writeFileSync(path.join(dir, name), text), path.join(dir, name));
    const doc = write('catalogue.json', JSON.stringify({ warehouses: [{ warehouseCode: 'G007', name: 'Shenzhen', countryCode: 'CN' }] }));
    const products = write('products.csv', 'sku,name,price,weightGrams\nA,Mug,1.50,100\nB,Plate,2,200\n');
    const stocks = write('stocks.csv', 'sku,warehouseCode,qty\nA,G007,5\nB,G007,3\n');
    const ok = runCli(['import', stocks, products, doc], env);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^imported 3 files: 1 warehouses, 2 products, 2 stocks; 2 stock changes; 5 rows in [\d.]+ s \(\d+ rows\/s\)\n$/);

    const bad = write('bad.csv', 'sku,warehouseCode,qty\nA,G007,9\nB,G007,1\nC,G007,1\n');
    const refused = runCli(['import', bad], env);
    assert.equal(refused.status, 1);
    assert.equal(refused.stderr, 'stockist: bad.csv line 4: sku unknown SKU C\n');
    const again = runCli(['import', write('same.csv', 'sku,warehouseCode,qty\nA,G007,5\n')], env);
    assert.match(again.stdout, /1 stocks; 0 stock changes/, 'the refused import changed nothing: A is still 5');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
