import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CsvError, parse } from 'csv-parse';
import type { Actor } from '../domain/audit.ts';
import { AppError, type FieldError } from '../domain/errors.ts';
import {
  CSV_COLUMNS,
  emptySection,
  IMPORT_SECTIONS,
  ImportRefused,
  ProblemList,
  recordChange,
  type ImportProblem,
  type ImportRights,
  type ImportSection,
  type RowSummary,
  type SectionPreview,
} from '../domain/import-format.ts';
import { parseDocument } from '../schemas/validate.ts';
import { ImportBody, ProductBody, StockSetRow } from '../schemas/admin.ts';
import { insertAudit } from '../store/audit.repository.ts';
import { refreshPlannerStatistics, type Handle, type Store, type Trx } from '../store/db.ts';
import { listCategories } from '../store/categories.repository.ts';
import { productIdsBySku, productsBySku, upsertProducts, type ProductInput } from '../store/products.repository.ts';
import { stampBulkLedger } from '../store/stock-feed.repository.ts';
import { bulkSetQty, ledgerRowCount, stockOfSkus, type BulkSet } from '../store/stocks.repository.ts';
import { listWarehouses, warehousesByCode } from '../store/warehouses.repository.ts';
import { listChannels } from '../store/channels.repository.ts';
import { categorySummary, channelSummary, loadCatalog, productInput, productSummary, warehouseSummary, type ImportSummary } from './catalog.service.ts';

export type ImportKind = 'catalog' | 'products' | 'stocks';

/** Rows per multi-row statement: well inside SQLite's and PostgreSQL's bind-parameter limits. */
const BATCH = 1000;
/** An import that wrote at least this many rows refreshes the planner's statistics (PostgreSQL). */
export const ANALYZE_AFTER_ROWS = 10_000;

export interface ImportProgress {
  file: string;
  bytesRead: number;
  totalBytes: number;
  rows: number;
}

export interface ImportResult extends ImportSummary {
  files: number;
  rows: number;
  ledgerRows: number;
}

/** Every problem names the file, and for CSV the line, so an operator can fix them all at once. */
function addErrors(problems: ProblemList, file: string, line: number | undefined, errors: FieldError[]) {
  for (const e of errors) problems.add({ file, ...(line === undefined ? {} : { line }), field: e.field, message: e.message });
}

/** The header's fields, or the syntax problem that keeps it from being read. */
async function readHeader(file: string): Promise<string[] | CsvError> {
  const parser = fs.createReadStream(file).pipe(parse({ trim: true, bom: true, skip_empty_lines: true, to_line: 1 }));
  try {
    for await (const record of parser) return record as string[];
  } catch (error) {
    if (error instanceof CsvError) return error;
    throw error;
  }
  return [];
}

/** The line a CSV syntax error is on (csv-parse copies its position's fields onto the error). */
const lineOf = (error: CsvError): number | undefined => (typeof error.lines === 'number' ? error.lines : undefined);

/**
 * What a CSV syntax error of csv-parse means to whoever fixes the file, and the column it names
 * (for a stray quote). A stray quote inside an unquoted field spoils that row only; after any other
 * syntax error the parser cannot tell where the next row starts, so the rest of the file is unread.
 */
function csvSyntaxProblem(error: CsvError, header: readonly string[] | null): { field: string; message: string } {
  if (error.code === 'INVALID_OPENING_QUOTE') {
    const column = (error as CsvError & { column?: unknown }).column;
    return {
      field: typeof column === 'number' ? (header?.[column] ?? '') : '',
      message: 'has a quote (") inside a field that does not start with one: put the whole field in quotes and double each quote in it ("12"" long")',
    };
  }
  if (error.code === 'CSV_QUOTE_NOT_CLOSED')
    return { field: '', message: 'a quoted field that starts on this line is never closed; the lines after it were read as part of it' };
  if (error.code === 'CSV_INVALID_CLOSING_QUOTE' || error.code === 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE')
    return {
      field: '',
      message: 'has text after the closing quote of a quoted field (a quote inside one is written twice: "12"" long"); the rest of the file was not read',
    };
  return { field: '', message: `${error.message.replace(/ (on|at) line \d+.*$/, '')}; the rest of the file was not read` };
}

/** JSON documents are catalogues; a CSV's header names its kind. A file that is neither is a problem. */
async function classify(file: string): Promise<ImportKind | ImportProblem> {
  const name = path.basename(file);
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) return { file: name, field: '', message: 'no such file' };
  if (/\.json$/i.test(file)) return 'catalog';
  if (!/\.csv$/i.test(file)) return { file: name, field: '', message: 'give a .json document or a .csv file' };
  const header = await readHeader(file);
  if (header instanceof CsvError) return { file: name, line: 1, ...csvSyntaxProblem(header, null) };
  for (const kind of ['stocks', 'products'] as const) {
    if (CSV_COLUMNS[kind].required.every((c) => header.includes(c))) return kind;
  }
  const products = `${CSV_COLUMNS.products.required.join(',')}[,${CSV_COLUMNS.products.optional.join(',')}]`;
  return {
    file: name,
    line: 1,
    field: '',
    message: `the header must name the columns of products (${products}) or stocks (${CSV_COLUMNS.stocks.required.join(',')})`,
  };
}

/**
 * Streams a CSV file as {line, values} objects keyed by its header. A row with the wrong number of
 * fields, or a stray quote, is reported with its line and skipped; any other CSV syntax error (an
 * unclosed quote) ends the file, since the rows after it cannot be told apart (csvSyntaxProblem).
 */
async function* csvRows(
  file: string,
  problems: ProblemList,
  onBytes: (bytes: number) => void,
): AsyncGenerator<{ line: number; values: Record<string, string> }> {
  const name = path.basename(file);
  let header: string[] | null = null;
  // The parser runs ahead of this loop (a whole chunk at a time): a stray quote is met before the
  // header row reaches it, so the header's names come from a read of their own.
  const names = await readHeader(file);
  const columns = Array.isArray(names) ? names : null;
  // The line the next row starts on: where an unclosed quote opened (csv-parse names the last line).
  let nextLine = 1;
  // A field with several stray quotes is one problem, not one per quote.
  let lastSkipped = 0;
  const onSkip = (error: CsvError | undefined): undefined => {
    if (!(error instanceof CsvError) || error.code !== 'INVALID_OPENING_QUOTE') throw error;
    const line = lineOf(error) ?? nextLine;
    if (line !== lastSkipped) problems.add({ file: name, line, ...csvSyntaxProblem(error, columns) });
    lastSkipped = line;
    nextLine = line + 1;
  };
  const stream = fs.createReadStream(file, { highWaterMark: 256 * 1024 });
  const parser = stream.pipe(
    parse({ trim: true, bom: true, skip_empty_lines: true, info: true, relax_column_count: true, skip_records_with_error: true, on_skip: onSkip }),
  );
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      nextLine = info.lines + 1;
      if (!header) {
        header = record;
        continue;
      }
      if (record.length !== header.length) {
        problems.add({ file: name, line: info.lines, field: '', message: `has ${record.length} fields, the header has ${header.length}` });
        continue;
      }
      const values: Record<string, string> = {};
      header.forEach((column, i) => {
        if (record[i] !== '') values[column] = record[i];
      });
      onBytes(stream.bytesRead);
      yield { line: info.lines, values };
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const line = error.code === 'CSV_QUOTE_NOT_CLOSED' ? nextLine : lineOf(error);
    problems.add({ file: name, line, ...csvSyntaxProblem(error, header) });
    stream.destroy();
  }
}

/** The row, or null after reporting why it is not one. */
function rowOf<T>(schema: object, values: Record<string, string>, problems: ProblemList, name: string, line: number): T | null {
  try {
    return parseDocument<T>(schema, values);
  } catch (error) {
    if (error instanceof AppError && error.errors) {
      addErrors(problems, name, line, error.errors);
      return null;
    }
    throw error;
  }
}

interface Context {
  db: Trx;
  store: Store;
  now: number;
  result: ImportResult;
  problems: ProblemList;
  /** The kinds of row this import may not write: each such row is a problem, and is not written. */
  rights: ImportRights;
  progress(p: ImportProgress): void;
  /** A dry run: what each write changes is recorded (the transaction is rolled back at the end). */
  preview?: PreviewCollector;
}

type Section = ImportSection;
const SECTIONS = IMPORT_SECTIONS;

/** The stock row key a preview shows: `SKU @ WAREHOUSE`. */
const stockKey = (sku: string, warehouseCode: string) => `${sku} @ ${warehouseCode}`;

/** Each section's rows by key, summarised as the audit log does: what a preview compares before and after a write. */
const READERS: Record<Section, (db: Handle, keys: string[]) => Promise<Map<string, RowSummary>>> = {
  warehouses: async (db, codes) => new Map([...(await warehousesByCode(db, codes))].map(([k, w]) => [k, warehouseSummary(w)])),
  categories: async (db, ids) => {
    const wanted = new Set(ids);
    return new Map((await listCategories(db)).filter((c) => wanted.has(String(c.id))).map((c) => [String(c.id), categorySummary(c)]));
  },
  products: async (db, skus) => new Map([...(await productsBySku(db, skus))].map(([k, p]) => [k, productSummary(p)])),
  stocks: async (db, keys) => {
    const wanted = new Set(keys);
    const skus = [...new Set(keys.map((k) => k.slice(0, k.indexOf(' @ '))))];
    const out = new Map<string, RowSummary>();
    for (const row of await stockOfSkus(db, skus, null)) {
      if (row.warehouseCode === null || row.qty === null) continue;
      const key = stockKey(row.sku, row.warehouseCode);
      if (wanted.has(key)) out.set(key, { qty: row.qty });
    }
    return out;
  },
  channels: async (db, codes) => {
    const wanted = new Set(codes);
    return new Map((await listChannels(db)).filter((c) => wanted.has(c.code)).map((c) => [c.code, channelSummary(c)]));
  },
};

/** What a dry run found: per section, the rows it would create or change; and every problem. */
export interface ImportPreview {
  rows: number;
  sections: Record<Section, SectionPreview>;
  problems: ImportProblem[];
  omitted: number;
}

/** Records, around each write of a dry run, the rows it touched as they were before and after. */
class PreviewCollector {
  readonly sections = Object.fromEntries(SECTIONS.map((s) => [s, emptySection()])) as Record<Section, SectionPreview>;

  async around<T>(db: Handle, keys: Partial<Record<Section, string[]>>, write: () => Promise<T>): Promise<T> {
    const touched = SECTIONS.filter((s) => (keys[s]?.length ?? 0) > 0);
    const before = await Promise.all(touched.map((s) => READERS[s](db, keys[s]!)));
    const result = await write();
    for (const [i, s] of touched.entries()) {
      const after = await READERS[s](db, keys[s]!);
      for (const key of new Set(keys[s]!)) {
        const row = after.get(key);
        if (row) recordChange(this.sections[s], key, before[i].get(key) ?? null, row);
      }
    }
    return result;
  }
}

/** A dry run ends by throwing this: the transaction rolls back, the preview is kept. */
class DryRunDone extends Error {}

/**
 * Reads a CSV in batches; `flush` writes one batch inside the import's transaction. Good rows are
 * still written after a bad one (the transaction is rolled back at the end), so that rows of later
 * files are checked against everything before them and the report lists every problem at once.
 */
async function eachBatch<T>(
  ctx: Context,
  file: string,
  parseRow: (values: Record<string, string>, line: number) => T | null,
  flush: (batch: { row: T; line: number }[]) => Promise<void>,
) {
  const totalBytes = fs.statSync(file).size;
  let bytesRead = 0;
  let batch: { row: T; line: number }[] = [];
  const report = () => ctx.progress({ file, bytesRead, totalBytes, rows: ctx.result.rows });
  for await (const { line, values } of csvRows(file, ctx.problems, (b) => (bytesRead = b))) {
    ctx.result.rows++;
    const row = parseRow(values, line);
    if (row === null) continue;
    batch.push({ row, line });
    if (batch.length === BATCH) {
      await flush(batch);
      batch = [];
      report();
    }
  }
  if (batch.length) await flush(batch);
  bytesRead = totalBytes;
  report();
}

/**
 * A CSV of a kind of row the import may not write: every row is read (so each is reported by its
 * line, and the count is true) and none is parsed or written.
 */
async function refuseCsvRows(ctx: Context, file: string, reason: string) {
  const name = path.basename(file);
  await eachBatch(
    ctx,
    file,
    (_values, line) => {
      ctx.problems.add({ file: name, line, field: '', message: reason });
      return null;
    },
    async () => {},
  );
}

async function importProductsCsv(ctx: Context, file: string) {
  const refused = ctx.rights.refused.products;
  if (refused) return refuseCsvRows(ctx, file, refused);
  const name = path.basename(file);
  const categories = new Set((await listCategories(ctx.db)).map((c) => c.id));
  // An optional column the file does not have leaves that value as it is on an existing product.
  const header = await readHeader(file);
  const given = { categoryId: Array.isArray(header) && header.includes('categoryId'), imageUrl: Array.isArray(header) && header.includes('imageUrl') };
  // Within one file a SKU appears once: which of two rows should win is ambiguous (as in PUT /stocks).
  const seen = new Map<string, number>();
  await eachBatch(
    ctx,
    file,
    (values, line) => {
      const p = rowOf<ProductBody>(ProductBody, values, ctx.problems, name, line);
      if (!p) return null;
      const first = seen.get(p.sku);
      if (first !== undefined) {
        ctx.problems.add({ file: name, line, field: 'sku', message: `${p.sku} is already on line ${first}` });
        return null;
      }
      seen.set(p.sku, line);
      if (typeof p.categoryId === 'number' && !categories.has(p.categoryId)) {
        ctx.problems.add({ file: name, line, field: 'categoryId', message: `unknown category ${p.categoryId}` });
        return null;
      }
      return p;
    },
    async (batch) => {
      const rows: ProductInput[] = batch.map(({ row: p }) => productInput(p, null));
      const write = () => upsertProducts(ctx.db, rows, ctx.now, given);
      if (ctx.preview) await ctx.preview.around(ctx.db, { products: rows.map((r) => r.sku) }, write);
      else await write();
      ctx.result.products += rows.length;
    },
  );
}

async function importStocksCsv(ctx: Context, file: string) {
  const refused = ctx.rights.refused.stocks;
  if (refused) return refuseCsvRows(ctx, file, refused);
  const name = path.basename(file);
  const warehouses = new Map((await listWarehouses(ctx.db)).map((w) => [w.code, w.id]));
  // One number per (product, warehouse) seen so far, mapped to its line: a million rows stay small.
  const seen = new Map<number, number>();
  await eachBatch(
    ctx,
    file,
    (values, line) => {
      const row = rowOf<StockSetRow>(StockSetRow, values, ctx.problems, name, line);
      if (row && !warehouses.has(row.warehouseCode)) {
        ctx.problems.add({ file: name, line, field: 'warehouseCode', message: `unknown warehouse ${row.warehouseCode}` });
        return null;
      }
      return row;
    },
    async (batch) => {
      const skus = [...new Set(batch.map((b) => b.row.sku))];
      const products = await productIdsBySku(ctx.db, skus);
      const sets: BulkSet[] = [];
      const keys: string[] = [];
      for (const { row, line } of batch) {
        const productId = products.get(row.sku);
        if (productId === undefined) {
          ctx.problems.add({ file: name, line, field: 'sku', message: `unknown SKU ${row.sku}` });
          continue;
        }
        const warehouseId = warehouses.get(row.warehouseCode)!;
        const key = productId * 1_048_576 + warehouseId;
        const first = seen.get(key);
        if (first !== undefined) {
          ctx.problems.add({ file: name, line, field: 'sku', message: `${row.sku} in ${row.warehouseCode} is already set on line ${first}` });
          continue;
        }
        seen.set(key, line);
        sets.push({ productId, warehouseId, qty: row.qty });
        keys.push(stockKey(row.sku, row.warehouseCode));
      }
      if (sets.length === 0) return;
      const write = () => bulkSetQty(ctx.db, ctx.store.dialect, sets, ctx.now);
      ctx.result.ledgerRows += ctx.preview ? await ctx.preview.around(ctx.db, { stocks: keys }, write) : await write();
      ctx.result.stocks += sets.length;
    },
  );
}

async function importJson(ctx: Context, file: string) {
  const name = path.basename(file);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    if (error instanceof SyntaxError) return ctx.problems.add({ file: name, field: '', message: `not valid JSON: ${error.message}` });
    throw error;
  }
  // Before the document's own checks, so that one report lists the rows the import may not write with the bad ones.
  const refusedRows = refuseJsonRows(ctx, name, raw);
  let parsed: ImportBody;
  try {
    parsed = parseDocument<ImportBody>(ImportBody, raw);
  } catch (error) {
    if (error instanceof AppError && error.errors) return addErrors(ctx.problems, name, undefined, error.errors);
    throw error;
  }
  // The kinds of row it may not write are left out: not written, not shown as changes by a dry run.
  const doc: ImportBody = { ...parsed };
  for (const section of SECTIONS) if (ctx.rights.refused[section]) delete doc[section];
  const before = await ledgerRowCount(ctx.db);
  let summary: ImportSummary;
  const keys = {
    warehouses: (doc.warehouses ?? []).map((w) => w.warehouseCode),
    categories: (doc.categories ?? []).map((c) => String(c.categoryId)),
    products: (doc.products ?? []).map((p) => p.sku),
    stocks: (doc.stocks ?? []).map((s) => stockKey(s.sku, s.warehouseCode)),
    channels: (doc.channels ?? []).map((c) => c.channelCode),
  };
  const write = () => loadCatalog(ctx.db, doc, ctx.now);
  try {
    summary = ctx.preview ? await ctx.preview.around(ctx.db, keys, write) : await write();
  } catch (error) {
    if (error instanceof AppError && error.errors) return addErrors(ctx.problems, name, undefined, error.errors);
    throw error;
  }
  const after = await ledgerRowCount(ctx.db);
  for (const k of ['warehouses', 'categories', 'products', 'stocks', 'channels'] as const) ctx.result[k] += summary[k];
  ctx.result.rows += Object.values(summary).reduce((a, b) => a + b, 0) + refusedRows;
  ctx.result.ledgerRows += after - before;
  const size = fs.statSync(file).size;
  ctx.progress({ file, bytesRead: size, totalBytes: size, rows: ctx.result.rows });
}

/** Reports each row of a document's sections that the import may not write (field `products[3]` …); how many there were. */
function refuseJsonRows(ctx: Context, name: string, raw: unknown): number {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 0;
  let rows = 0;
  for (const section of SECTIONS) {
    const reason = ctx.rights.refused[section];
    const list = (raw as Record<string, unknown>)[section];
    if (!reason || list === undefined) continue;
    if (!Array.isArray(list)) {
      ctx.problems.add({ file: name, field: section, message: reason });
      continue;
    }
    for (let i = 0; i < list.length; i++) ctx.problems.add({ file: name, field: `${section}[${i}]`, message: reason });
    rows += list.length;
  }
  return rows;
}

const ORDER: ImportKind[] = ['catalog', 'products', 'stocks'];

/** Each file's kind, in the order they are imported (documents, then products, then stocks); a file of no kind is a problem. */
async function classifyAll(files: string[], problems: ProblemList): Promise<{ file: string; kind: ImportKind }[]> {
  const kinds: { file: string; kind: ImportKind }[] = [];
  for (const file of files) {
    const kind = await classify(file);
    if (typeof kind === 'string') kinds.push({ file, kind });
    else problems.add(kind);
  }
  return kinds.sort((a, b) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind));
}

const emptyResult = (files: number): ImportResult => ({ files, rows: 0, ledgerRows: 0, warehouses: 0, categories: 0, products: 0, stocks: 0, channels: 0 });

async function importAll(ctx: Context, kinds: { file: string; kind: ImportKind }[]) {
  for (const { file, kind } of kinds) {
    if (kind === 'catalog') await importJson(ctx, file);
    else if (kind === 'products') await importProductsCsv(ctx, file);
    else await importStocksCsv(ctx, file);
  }
}

/**
 * A dry run of importFiles (issue 29, 9): the same files, rules and writes, inside a transaction
 * that is always rolled back, recording what each write changed: new rows, changed fields (before
 * → after) and stock levels, with every problem per row. Nothing is written and nothing audited.
 */
async function previewFiles(store: Store, rights: ImportRights, files: string[], now: number): Promise<ImportPreview> {
  const problems = new ProblemList();
  const kinds = await classifyAll(files, problems);
  const preview = new PreviewCollector();
  let rows = 0;
  try {
    await store.db.transaction().execute(async (db) => {
      const ctx: Context = { db, store, now, result: emptyResult(files.length), problems, rights, progress: () => {}, preview };
      await importAll(ctx, kinds);
      rows = ctx.result.rows;
      throw new DryRunDone();
    });
  } catch (error) {
    if (!(error instanceof DryRunDone)) throw error;
  }
  return { rows, sections: preview.sections, problems: problems.sorted(), omitted: problems.omitted };
}

/** previewFiles of an upload held as text (the console), through a private temporary file as importText does. */
export async function previewText(store: Store, rights: ImportRights, upload: { fileName: string; content: string }, now: number): Promise<ImportPreview> {
  return withUploadFile(upload, (file) => previewFiles(store, rights, [file], now));
}

async function withUploadFile<T>(upload: { fileName: string; content: string }, use: (file: string) => Promise<T>): Promise<T> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'stockist-import-'));
  try {
    const file = path.join(dir, path.basename(upload.fileName));
    await fs.promises.writeFile(file, upload.content, { mode: 0o600 });
    return await use(file);
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}

/**
 * Imports JSON catalogue documents (the `POST /admin/v1/import` body) and CSV files of products
 * or stocks in one transaction, in dependency order (documents, then products, then stocks). Every
 * file is read to the end; if any row is bad, nothing is written and ImportRefused lists the
 * problems (the first MAX_REPORTED_PROBLEMS, and how many more). CSV files are streamed in batches.
 * One audit row (target `catalog:import`) counts what the import wrote, in its transaction. A row
 * of a kind that `rights` refuses is a problem like a bad one (the console: the staff member's role).
 */
export async function importFiles(
  store: Store,
  actor: Actor,
  rights: ImportRights,
  files: string[],
  now: number,
  progress: (p: ImportProgress) => void = () => {},
): Promise<ImportResult> {
  const problems = new ProblemList();
  const kinds = await classifyAll(files, problems);
  const result = await store.db.transaction().execute(async (db) => {
    const result = emptyResult(files.length);
    const ctx: Context = { db, store, now, result, problems, rights, progress };
    await importAll(ctx, kinds);
    // Throwing rolls the transaction back: a refused import writes nothing.
    if (problems.count > 0) throw new ImportRefused(problems);
    await stampBulkLedger(db, store.dialect);
    const names = files.map((f) => path.basename(f)).join(', ');
    const after = { source: 'files', fileNames: names.length > 500 ? `${names.slice(0, 497)}...` : names, ...result };
    await insertAudit(db, actor, { action: 'catalog.import', target: 'catalog:import', before: null, after }, now);
    return result;
  });
  // After the commit: a large import changes the tables' shape enough to mislead the planner.
  if (result.products + result.stocks + result.ledgerRows >= ANALYZE_AFTER_ROWS) {
    await refreshPlannerStatistics(store.db, store.dialect, [
      'warehouses',
      'categories',
      'products',
      'stocks',
      'stock_ledger',
      'channels',
      'channel_warehouses',
    ]);
  }
  return result;
}

/**
 * An import uploaded as text (the console): the same all-or-nothing path as `stockist import`,
 * through a private temporary file named like the upload (its extension says JSON or CSV, and
 * problems name it), removed afterwards whatever happens.
 */
export async function importText(
  store: Store,
  actor: Actor,
  rights: ImportRights,
  upload: { fileName: string; content: string },
  now: number,
  progress: (p: ImportProgress) => void = () => {},
): Promise<ImportResult> {
  return withUploadFile(upload, (file) => importFiles(store, actor, rights, [file], now, progress));
}
