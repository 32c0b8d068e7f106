import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { runCli, tempDir } from './process.ts';
import { PG_SKIP, emptyPgSchema } from '../helpers.ts';

describe('stockist import', () => {
  it('imports files with a one-line summary off a terminal, and refuses a bad row naming its line', () => {
    const dir = tempDir();
    const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'import.db')}` };
    const write = (name: string, text: string) => {
      fs.writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const doc = write('catalogue.json', JSON.stringify({ warehouses: [{ warehouseCode: 'G007', name: 'Shenzhen', countryCode: 'CN' }] }));
    const products = write('products.csv', 'sku,name,price,weightGrams\nA,Mug,1.50,100\nB,Plate,2,200\n');
    const stocks = write('stocks.csv', 'sku,warehouseCode,qty\nA,G007,5\nB,G007,3\n');
    assert.equal(runCli(['import', doc], env).status, 1, 'import does not create a database');
    assert.equal(runCli(['migrate'], env).status, 0);
    const ok = runCli(['import', stocks, products, doc], env);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^imported 3 files: 1 warehouses, 2 products, 2 stocks; 2 stock changes; 5 rows in [\d.]+ s \(\d+ rows\/s\)\n$/);

    const bad = write('bad.csv', 'sku,warehouseCode,qty\nA,G007,9\nB,G007,1\nC,G007,1\n');
    const refused = runCli(['import', bad], env);
    assert.equal(refused.status, 1);
    assert.equal(
      refused.stderr,
      `stockist: database sqlite:${path.join(dir, 'import.db')}\nstockist: import refused, nothing was written: bad.csv line 4: sku unknown SKU C\n`,
    );
    // Several bad rows: all of them, one a line; past the cap, how many more.
    const several = write(
      'several.csv',
      ['sku,warehouseCode,qty', 'A,G007,9', 'X,G007,1', 'B,MARS,1', 'B,G007,-2', ...Array.from({ length: 60 }, (_, i) => `Z${i},G007,1`)].join('\n'),
    );
    const listed = runCli(['import', several], env);
    assert.equal(listed.status, 1);
    const lines = listed.stderr.trimEnd().split('\n').slice(1);
    assert.equal(lines[0], 'stockist: import refused, nothing was written: 63 problems');
    assert.deepEqual(lines.slice(1, 4), [
      '  several.csv line 3: sku unknown SKU X',
      '  several.csv line 4: warehouseCode unknown warehouse MARS',
      '  several.csv line 5: qty must be an integer from 0 to 1000000000',
    ]);
    assert.equal(lines.length, 1 + 50 + 1);
    assert.equal(lines.at(-1), '  … and 13 more');
    const again = runCli(['import', write('same.csv', 'sku,warehouseCode,qty\nA,G007,5\n')], env);
    assert.match(again.stdout, /1 stocks; 0 stock changes/, 'the refused import changed nothing: A is still 5');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a products CSV without categoryId and imageUrl leaves them (and the options) as they are on an existing product', (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'import.db');
    const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${file}` };
    const write = (name: string, text: string) => {
      fs.writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    assert.equal(runCli(['migrate'], env).status, 0);
    const doc = write(
      'catalogue.json',
      JSON.stringify({
        categories: [{ categoryId: 10, name: 'Home', parentId: 0 }],
        products: [
          { sku: 'A', name: 'Mug', categoryId: 10, price: '1.50', weightGrams: 100, imageUrl: 'https://img.example/a.jpg', options: { color: 'red' } },
        ],
      }),
    );
    assert.equal(runCli(['import', doc], env).status, 0);
    const ok = runCli(['import', write('products.csv', 'sku,name,price,weightGrams\nA,Big mug,2.00,120\n')], env);
    assert.equal(ok.status, 0, ok.stderr);
    const db = new SQLite(file, { readonly: true });
    t.after(() => db.close());
    assert.deepEqual(db.prepare("select name, price_cents, category_id, image_url, options from products where sku = 'A'").get(), {
      name: 'Big mug',
      price_cents: 200,
      category_id: 10,
      image_url: 'https://img.example/a.jpg',
      options: JSON.stringify({ color: 'red' }),
    });
  });

  it('--help lists the accepted CSV headers and every field of the JSON document', async () => {
    const help = runCli(['import', '--help'], {});
    assert.equal(help.status, 0);
    assert.match(help.stdout, /products: sku,name,price,weightGrams,\[categoryId\],\[imageUrl\]/);
    assert.match(help.stdout, /stocks: +sku,warehouseCode,qty/);
    const { ImportBody } = await import('../../src/schemas/admin.ts');
    const sections = (ImportBody as unknown as { properties: Record<string, { items: { properties: Record<string, unknown>; required?: string[] } }> })
      .properties;
    for (const [section, schema] of Object.entries(sections)) {
      const line = help.stdout.split('\n').findIndex((l) => l.includes(`"${section}":`));
      assert.ok(line >= 0, `the help shows the "${section}" section`);
      const text = help.stdout
        .split('\n')
        .slice(line, line + 2)
        .join(' ');
      for (const field of Object.keys(schema.items.properties)) {
        const optional = !(schema.items.required ?? []).includes(field);
        assert.ok(text.includes(optional ? `["${field}"]` : `"${field}"`), `${section}.${field} is listed${optional ? ' as optional' : ''}`);
      }
    }
  });

  for (const dialect of ['sqlite', 'postgres'] as const) {
    it(`lists every CSV syntax error as a bad row with its line, exits non-zero and writes nothing (${dialect}; issue 44, 1)`, {
      skip: dialect === 'postgres' ? PG_SKIP : false,
    }, async (t) => {
      const dir = tempDir();
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const env = {
        DATA_DIR: dir,
        DATABASE_URL: dialect === 'sqlite' ? `sqlite:${path.join(dir, 'import.db')}` : (await emptyPgSchema(t, 'importcsv')).url,
      };
      const write = (name: string, text: string) => {
        fs.writeFileSync(path.join(dir, name), text);
        return path.join(dir, name);
      };
      assert.equal(runCli(['migrate'], env).status, 0);
      const doc = write('catalogue.json', JSON.stringify({ warehouses: [{ warehouseCode: 'G007', name: 'Shenzhen', countryCode: 'CN' }] }));
      assert.equal(runCli(['import', doc], env).status, 0);
      // A stray quote in an unquoted field (line 3), two in one field (line 5: one problem), a bad
      // price (line 4): every line is listed, the good rows around them are read.
      const products = write(
        'products.csv',
        ['sku,name,price,weightGrams', 'R1,Ruler,1.00,10', 'S4-RUL-1,Steel ruler 12" long,4.00,100', 'R2,Tape,abc,5', 'R3,a "b" c,1,1', 'R4,Pen,2,3'].join(
          '\n',
        ),
      );
      const refused = runCli(['import', products], env);
      assert.equal(refused.status, 1, refused.stderr);
      const lines = refused.stderr.trimEnd().split('\n').slice(1);
      assert.equal(lines[0], 'stockist: import refused, nothing was written: 3 problems');
      assert.match(lines[1], /^ {2}products\.csv line 3: name has a quote \("\) inside a field that does not start with one/);
      assert.match(lines[2], /^ {2}products\.csv line 4: price /);
      assert.match(lines[3], /^ {2}products\.csv line 5: name has a quote /);
      assert.equal(lines.length, 4);
      // A quote that is never closed swallows the rest of the file: reported on the line it opens.
      const unclosed = write('unclosed.csv', 'sku,name,price,weightGrams\nR1,Ruler,1.00,10\nR2,"Tape,2,5\nR3,Pen,2,3\n');
      const open = runCli(['import', unclosed], env);
      assert.equal(open.status, 1);
      assert.match(open.stderr, /unclosed\.csv line 3: a quoted field that starts on this line is never closed/);
      // A bad quote in the header: the file's kind cannot be read.
      const header = runCli(['import', write('header.csv', 'sku,na"me,price,weightGrams\nR1,Ruler,1.00,10\n')], env);
      assert.equal(header.status, 1);
      assert.match(header.stderr, /header\.csv line 1: has a quote/);
      const none = runCli(['import', write('none.csv', 'sku,warehouseCode,qty\n')], env);
      assert.equal(none.status, 0, none.stderr);
      assert.match(none.stdout, /imported 1 file: nothing; 0 stock changes; 0 rows/);
      const stock = runCli(['import', write('stock.csv', 'sku,warehouseCode,qty\nR1,G007,1\n')], env);
      assert.equal(stock.status, 1);
      assert.match(stock.stderr, /stock\.csv line 2: sku unknown SKU R1\n$/, 'the refused imports wrote no product');
    });
  }
});
