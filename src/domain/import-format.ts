import { AppError, MAX_LISTED_ERRORS } from './errors.ts';

/** CSV columns per kind; the header decides the kind, so columns may come in any order. */
export const CSV_COLUMNS = {
  products: { required: ['sku', 'name', 'price', 'weightGrams'], optional: ['categoryId', 'imageUrl'] },
  stocks: { required: ['sku', 'warehouseCode', 'qty'], optional: [] },
} as const;

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
