/**
 * Where a bench run's results are written (SPEC §11): `bench/results/latest.json` holds, per
 * database, the last **full** run — every scenario at the default scale and duration — and
 * `<db>-full.md` its table. Any other run (`--only`, `--quick`, another scale, duration,
 * concurrency or stock layout, a profile or extra Node flags) writes its own pair under
 * `bench/results/runs/` and never replaces them, so a partial run cannot pass for the full one.
 */
import path from 'node:path';

export interface RunShape {
  db: string;
  /** The command-line options that were given (undefined when left at their default). */
  given: Record<string, string | boolean | undefined>;
}

/** Options that change what a run measures; a run that sets any of them is not the full run. */
const PARTIAL_OPTIONS = ['quick', 'only', 'skus', 'orders', 'ledger', 'duration', 'connections', 'stock-layout', 'warmup', 'profile', 'node-flags'] as const;

/** The options that make this run partial, in the order above (empty for a full run). */
export function partialBecause(run: RunShape): string[] {
  return PARTIAL_OPTIONS.filter((o) => {
    const v = run.given[o];
    return v !== undefined && v !== false;
  });
}

export interface ResultFiles {
  /** latest.json to merge this run into under its database's key, or null. */
  latestJson: string | null;
  /** The run's table (markdown). */
  markdown: string;
  /** The run's own JSON (partial runs only). */
  ownJson: string | null;
}

export function resultFiles(dir: string, run: RunShape, at: Date): ResultFiles {
  if (partialBecause(run).length === 0) {
    return { latestJson: path.join(dir, 'latest.json'), markdown: path.join(dir, `${run.db}-full.md`), ownJson: null };
  }
  const stamp = at.toISOString().replace(/[:.]/g, '-');
  const base = path.join(dir, 'runs', `${stamp}-${run.db}`);
  return { latestJson: null, markdown: `${base}.md`, ownJson: `${base}.json` };
}
