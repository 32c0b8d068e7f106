import { CSV_COLUMNS, MAX_REPORTED_PROBLEMS } from '../domain/import-format.ts';

const columns = (kind: keyof typeof CSV_COLUMNS) => [...CSV_COLUMNS[kind].required, ...CSV_COLUMNS[kind].optional.map((c) => `[${c}]`)].join(',');

/**
 * `stockist import --help`: what the files may contain. Kept beside the schema by a test that
 * every field of the import document's sections is named here (test/e2e/cli.test.ts).
 */
export const IMPORT_HELP = `
Files are imported in one transaction, in dependency order (JSON documents, then products CSV,
then stocks CSV), whatever order they are given in. A refused import writes nothing and lists every
problem (file, line, field; the first ${MAX_REPORTED_PROBLEMS}, then how many more).

CSV files (UTF-8, comma-separated, a header line; the header decides the kind, columns in any order):
  products: ${columns('products')}
            e.g.  MUG-1,Mug,12.50,350,1000,https://img.example/mug.jpg
            price in currency units with at most 2 decimals; categoryId must exist; an optional
            column the file leaves out keeps that value (and options) on an existing product,
            one it has but leaves empty clears it
  stocks:   ${columns('stocks')}
            e.g.  MUG-1,G007,25        (sets the quantity; the SKU and warehouse must exist)

JSON documents (.json): the body of POST /admin/v1/import; every section optional, [x] optional:
  {
    "warehouses": [{ "warehouseCode", "name", "countryCode", ["countryName"], ["status"] }],
    "categories": [{ "categoryId", "name", "parentId" (0 = root), ["imgUrl"] }],
    "products":   [{ "sku", "name", "price", "weightGrams", ["categoryId"], ["imageUrl"], ["options"] }],
    "stocks":     [{ "sku", "warehouseCode", "qty" }],
    "channels":   [{ "channelCode", "name", "channelType" (Standard|Express|Expedited), "warehouseCodes": [..],
                     "countries": [..] (or ["*"]), "baseFee", "perKgFee", "deliveryDaysMin", "deliveryDaysMax", ["carriers"]: [..], ["trackingUrlTemplate"] }]
  }
  a channel's carriers are the console ship form's pick-list; its tracking URL template is https and
  holds {trackingNo}; at most 10,000 rows per section; see docs/operator-guide.md.`;
