import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * What the checkpoint thread runs (CommonJS, evaluated): its own connection to the file, and a
 * PASSIVE checkpoint every `intervalMs` — it copies what the WAL holds into the database file and
 * never waits for, nor blocks, the writer. It reports each checkpoint that had frames to copy.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 0');
const round = () => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    if (r.log > 0) parentPort.postMessage({ log: r.log, checkpointed: r.checkpointed });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
};
const timer = setInterval(round, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface CheckpointRound {
  /** WAL frames when the checkpoint started. */
  log: number;
  /** Frames copied into the database file (all of `log` unless the writer's readers held some back). */
  checkpointed: number;
}

export interface Checkpointer {
  /** Checkpoints that had frames to copy, since the start. */
  readonly rounds: number;
  /** The last such checkpoint, or the last error the thread met (it keeps trying). */
  readonly last: CheckpointRound | { error: string } | null;
  stop(): Promise<void>;
}

/**
 * Runs a SQLite file's WAL checkpoints on a thread of their own. A checkpoint copies pages into
 * the database file and syncs both files; run by the committing connection (auto-checkpoint),
 * it blocked the server's event loop for the whole copy and both syncs every ~1,000 pages — a
 * few dozen orders. The committing connection keeps an auto-checkpoint at a larger size as the
 * bound on the WAL should this thread fall behind or fail (docs/decisions.md, "WAL checkpoints
 * off the request path").
 */
export function startCheckpointer(file: string, intervalMs: number): Checkpointer {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { file, intervalMs, driver: createRequire(import.meta.url).resolve('better-sqlite3') },
    // It allocates a pragma's result every interval: a small heap is plenty, and keeps the
    // thread's share of the server's memory small.
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
  });
  // A process that forgets to close its store must still be able to exit.
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const state: { rounds: number; last: CheckpointRound | { error: string } | null } = { rounds: 0, last: null };
  worker.on('message', (m: CheckpointRound | { error: string }) => {
    state.last = m;
    if (!('error' in m)) state.rounds++;
  });
  worker.on('error', (error) => {
    state.last = { error: error.message };
  });
  return {
    get rounds() {
      return state.rounds;
    },
    get last() {
      return state.last;
    },
    async stop() {
      // Held while it stops: an unreferenced worker would let the event loop end under the await.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
