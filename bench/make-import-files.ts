// Writes a products CSV and a stock CSV for the import measurement (streamed, any size):
//   node --import tsx bench/make-import-files.ts <dir> [stockRows=1000000]
// gives <dir>/products.csv (stockRows/3 SKUs), <dir>/stocks.csv (stockRows rows over G007, G006, US01)
// and <dir>/warehouses.json. Import them with `stockist import <dir>/*`.
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';

export const WAREHOUSES = ['G007', 'G006', 'US01'];
export const benchSku = (i: number) => `BENCH-${String(i).padStart(7, '0')}`;

async function writeLines(file: string, header: string, count: number, line: (i: number) => string) {
  const out = fs.createWriteStream(file);
  out.write(`${header}\n`);
  for (let i = 0; i < count; i++) if (!out.write(`${line(i)}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

export async function makeImportFiles(dir: string, stockRows: number): Promise<string[]> {
  fs.mkdirSync(dir, { recursive: true });
  const skus = Math.ceil(stockRows / WAREHOUSES.length);
  const doc = {
    warehouses: [
      { warehouseCode: 'G007', name: 'Shenzhen', countryCode: 'CN' },
      { warehouseCode: 'G006', name: 'Yiwu', countryCode: 'CN' },
      { warehouseCode: 'US01', name: 'Los Angeles', countryCode: 'US' },
    ],
  };
  fs.writeFileSync(path.join(dir, 'warehouses.json'), JSON.stringify(doc));
  await writeLines(
    path.join(dir, 'products.csv'),
    'sku,name,price,weightGrams',
    skus,
    (i) => `${benchSku(i)},Bench product ${i},${1 + Math.floor((i % 5000) / 100)}.${String(i % 100).padStart(2, '0')},${100 + (i % 900)}`,
  );
  await writeLines(
    path.join(dir, 'stocks.csv'),
    'sku,warehouseCode,qty',
    stockRows,
    (i) => `${benchSku(Math.floor(i / 3))},${WAREHOUSES[i % 3]},${(i * 7919) % 500}`,
  );
  return ['warehouses.json', 'products.csv', 'stocks.csv'].map((f) => path.join(dir, f));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: make-import-files.ts <dir> [stockRows]');
  const files = await makeImportFiles(dir, Number(process.argv[3] ?? 1_000_000));
  console.log(files.join('\n'));
}
