import { AppError, MAX_LISTED_ERRORS } from './errors.ts';

/** CSV columns per kind; the header decides the kind, so columns may come in any order. */
export const CSV_COLUMNS = {
  products: { required: ['sku', 'name', 'price', 'weightGrams'], optional: ['categoryId', 'imageUrl'] },
  stocks: { required: ['sku', 'warehouseCode', 'qty'], optional: [] },
} as const;

/** The kinds of row an import writes, in the order it writes them. */
export const IMPORT_SECTIONS = ['warehouses', 'categories', 'products', 'stocks', 'channels'] as const;
export type ImportSection = (typeof IMPORT_SECTIONS)[number];

/**
 * What an import may write (issue 44, 10): per kind of row it may not, the sentence that refuses
 * each such row. An import is checked against it row by row, in the dry run as in the real one; a
 * refused row refuses the whole import, like a bad one. The console derives it from the signed-in
 * staff member's role (domain/staff.ts, staffImportRights); the operator API and `stockist import`
 * act with every right.
 */
export interface ImportRights {
  refused: Readonly<Partial<Record<ImportSection, string>>>;
}

/** The operator key's and the server's command line's: every kind of row. */
export const ALL_IMPORT_RIGHTS: ImportRights = { refused: {} };

/** A refused import lists at most this many problems, and counts the rest. */
export const MAX_REPORTED_PROBLEMS = MAX_LISTED_ERRORS;

/** One bad row (or file) of an import: where it is and what is wrong with it. */
export interface ImportProblem {
  file: string;
  /** CSV line (1 = the header); absent for JSON documents and whole-file problems. */
  line?: number;
  field: string;
  message: string;
}

export const problemText = (p: ImportProblem) => `${p.file}${p.line ? ` line ${p.line}` : ''}: ${p.field ? `${p.field} ` : ''}${p.message}`;

/** Collects an import's problems, keeping the first MAX_REPORTED_PROBLEMS and counting the rest. */
export class ProblemList {
  readonly listed: ImportProblem[] = [];
  omitted = 0;

  add(problem: ImportProblem): void {
    if (this.listed.length < MAX_REPORTED_PROBLEMS) this.listed.push(problem);
    else this.omitted++;
  }

  get count(): number {
    return this.listed.length + this.omitted;
  }

  /** Grouped by file (in the order files were read), then by line: problems found while writing a batch come late. */
  sorted(): ImportProblem[] {
    const files = [...new Set(this.listed.map((p) => p.file))];
    return this.listed
      .map((p, i) => ({ p, i }))
      .sort((a, b) => files.indexOf(a.p.file) - files.indexOf(b.p.file) || (a.p.line ?? 0) - (b.p.line ?? 0) || a.i - b.i)
      .map(({ p }) => p);
  }
}

/** The whole import was refused (nothing written) because of these problems. */
export class ImportRefused extends AppError {
  readonly problems: ImportProblem[];
  readonly omitted: number;

  constructor(list: ProblemList) {
    const problems = list.sorted();
    const shown = problems.slice(0, 3).map(problemText).join('; ');
    super(
      'invalid',
      40000,
      list.count === 1 ? problemText(problems[0]) : `${list.count} problems, nothing imported: ${shown}${list.count > 3 ? '; …' : ''}`,
      problems.map((p) => ({ ...p })),
    );
    this.problems = problems;
    this.omitted = list.omitted;
  }
}

/**
 * The CSV templates the console offers (issue 29, 9): each kind's columns, required then optional,
 * and one example row. The example SKU and warehouse are placeholders to replace: a category
 * or warehouse must exist before a row can name it.
 */
export const CSV_TEMPLATES = {
  products: {
    columns: [...CSV_COLUMNS.products.required, ...CSV_COLUMNS.products.optional],
    example: {
      sku: 'EXAMPLE-SKU-1',
      name: 'Example product',
      price: '12.50',
      weightGrams: '250',
      categoryId: '',
      imageUrl: 'https://img.example/example-sku-1.jpg',
    },
  },
  stocks: {
    columns: [...CSV_COLUMNS.stocks.required, ...CSV_COLUMNS.stocks.optional],
    example: { sku: 'EXAMPLE-SKU-1', warehouseCode: 'WH-EXAMPLE', qty: '100' },
  },
} as const satisfies Record<keyof typeof CSV_COLUMNS, { columns: readonly string[]; example: Record<string, string> }>;

/** A row's values as the audit log summarises them (strings, numbers, booleans or null). */
export type RowSummary = Record<string, string | number | boolean | null>;

/** One field an import would change: what it is and what it would be. */
export interface FieldChange {
  field: string;
  before: string | number | boolean | null;
  after: string | number | boolean | null;
}

/** The fields that differ between a row before and after (before null: a new row, every field set). */
function changedFields(before: RowSummary | null, after: RowSummary): FieldChange[] {
  const out: FieldChange[] = [];
  for (const [field, value] of Object.entries(after)) {
    const was = before === null ? null : (before[field] ?? null);
    if (before === null ? value !== null : was !== value) out.push({ field, before: was, after: value });
  }
  return out;
}

/** A preview lists at most this many rows of each section; the rest are counted. */
export const MAX_PREVIEW_ROWS = 500;

/** One row an import would create or change. */
export interface RowChange {
  key: string;
  kind: 'new' | 'changed';
  changes: FieldChange[];
}

/** What an import would do to one kind of row: counts, and the first MAX_PREVIEW_ROWS rows it creates or changes. */
export interface SectionPreview {
  created: number;
  changed: number;
  unchanged: number;
  rows: RowChange[];
}

export const emptySection = (): SectionPreview => ({ created: 0, changed: 0, unchanged: 0, rows: [] });

/** Adds one row's before and after to a section's preview. */
export function recordChange(section: SectionPreview, key: string, before: RowSummary | null, after: RowSummary): void {
  const changes = changedFields(before, after);
  if (before !== null && changes.length === 0) {
    section.unchanged++;
    return;
  }
  if (before === null) section.created++;
  else section.changed++;
  if (section.rows.length < MAX_PREVIEW_ROWS) section.rows.push({ key, kind: before === null ? 'new' : 'changed', changes });
}
