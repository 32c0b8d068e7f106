import path from 'node:path';
import type { openStore as OpenStore } from '../src/store/db.ts';
import type { migrateToLatest as MigrateToLatest } from '../src/store/migrate.ts';
import { type FreshStore, freshStore } from './fresh-store.ts';

/** One of the two checkouts an A/B bench compares (bench/order-cpu-ab.ts, bench/order-http-ab.ts). */
export interface Side {
  name: string;
  /** One order, start to finish. */
  one: () => Promise<unknown>;
  close: () => Promise<void>;
}

/**
 * Runs the two sides' orders interleaved in one process — `batch` of A, `batch` of B, for
 * `rounds` rounds, which side goes first alternating — and sums the process's CPU time (user +
 * system) per side, so whatever else runs on the machine slows both alike. Closes both sides and
 * returns the line to print: each side's µs per order, B/A overall and the median of the rounds.
 */
export async function interleave(label: string, sides: [Side, Side], opts: { rounds: number; batch: number; warmup: number }): Promise<string> {
  for (const s of sides) for (let i = 0; i < opts.warmup; i++) await s.one();
  const cpuUs = [0, 0];
  const perRound: number[][] = [[], []];
  for (let r = 0; r < opts.rounds; r++) {
    // Alternate which side goes first, so neither always runs right after the other's garbage.
    for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
      const before = process.cpuUsage();
      for (let k = 0; k < opts.batch; k++) await sides[i].one();
      const used = process.cpuUsage(before);
      cpuUs[i] += used.user + used.system;
      perRound[i].push((used.user + used.system) / opts.batch);
    }
  }
  for (const s of sides) await s.close();
  const orders = opts.rounds * opts.batch;
  const [a, b] = [cpuUs[0] / orders, cpuUs[1] / orders];
  const ratios = perRound[1].map((x, i) => x / perRound[0][i]).sort((x, y) => x - y);
  return (
    `${label}: ${sides[0].name} ${a.toFixed(1)} µs/order, ${sides[1].name} ${b.toFixed(1)} µs/order; ` +
    `B/A overall ${(b / a).toFixed(3)}, median of ${ratios.length} rounds ${ratios[Math.floor(ratios.length / 2)].toFixed(3)}\n`
  );
}

/**
 * A fresh database (bench/fresh-store.ts) opened with the checkout's own store code (its
 * `openStore` and `migrateToLatest`, loaded from `root`; its `Store` typed as this checkout's: the
 * two are alike where a bench uses them). `prefix` names the temporary folder or schema.
 */
export async function sideStore(root: string, db: string, pgUrl: string, prefix: string): Promise<FreshStore> {
  const { openStore } = (await import(path.join(root, 'src/store/db.ts'))) as { openStore: typeof OpenStore };
  const { migrateToLatest } = (await import(path.join(root, 'src/store/migrate.ts'))) as { migrateToLatest: typeof MigrateToLatest };
  return freshStore({ openStore, migrateToLatest }, db, pgUrl, `${prefix}_${path.basename(root)}`);
}
