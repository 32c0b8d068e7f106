/**
 * `stockist serve --processes N`: N API processes sharing one port (node:cluster; the primary
 * accepts the connections and hands them round-robin to the processes), over the same database.
 * What one process guarantees holds across N:
 * - writes are serialised by the database (SQLite's write lock in WAL mode, PostgreSQL's row
 *   locks), exactly as for two servers started by hand (the two-process tests);
 * - the per-merchant rate budget is one budget: the primary keeps the buckets and every process
 *   asks it (`primaryBuckets`), unless REDIS_URL is set, which is shared already;
 * - a credential changed in one process drops the cached token lookups of all of them: the
 *   primary relays the word, so a revoked token stops everywhere within the relay's delay (well
 *   under a millisecond on one machine), and never later than TOKEN_CACHE_SECONDS;
 * - one process among them runs the background jobs (role `all`: the first; the others `api`);
 * - SIGTERM or SIGINT to the primary (what `stockist stop` sends) stops every process gracefully,
 *   and the primary exits when the last has; a process that dies is replaced, and if the primary
 *   itself is killed, the processes end at once rather than run on unsupervised.
 * Messages are plain objects tagged `stockist`; everything else on the channel is ignored.
 */
import cluster, { type Worker } from 'node:cluster';
import pino from 'pino';
import type { BucketLimits } from '../domain/token-bucket.ts';
import { memoryBuckets } from '../http/rate-limit.ts';
import type { ProcessGroup } from '../plugins/foundation.ts';
import type { Config } from '../config.ts';
import type { Role } from './server.ts';

/** One bucket `take` asked of the primary, and its answer. */
interface Take {
  id: number;
  key: string;
  limits: BucketLimits;
  cost: number;
}
interface Took {
  id: number;
  allowed: boolean;
  tokens: number;
  error?: string;
}

type Message =
  | { stockist: 'take'; takes: Take[] }
  | { stockist: 'took'; answers: Took[] }
  | { stockist: 'tokens-cleared' }
  | { stockist: 'listening'; urls: { merchant: string; admin: string } };

const isMessage = (m: unknown): m is Message => typeof m === 'object' && m !== null && typeof (m as { stockist?: unknown }).stockist === 'string';

/** The environment variable that tells a forked process its place in the group (0 runs the jobs). */
const INDEX_VARIABLE = 'STOCKIST_PROCESS_INDEX';

/** In a process forked by `runPrimary`: its index and role, else null. */
export function groupMember(role: Role): { index: number; role: Role } | null {
  if (!cluster.isWorker) return null;
  const index = Number(process.env[INDEX_VARIABLE] ?? '0');
  return { index, role: role === 'all' && index > 0 ? 'api' : role };
}

/**
 * The group as a forked process sees it. The bucket store asks the primary over the IPC channel;
 * an answer that does not come (the primary is gone) fails the check, which the rate limiter
 * treats as it treats an unreachable Redis: the request passes.
 */
export function joinGroup(): ProcessGroup {
  const pending = new Map<number, { resolve: (r: { allowed: boolean; tokens: number }) => void; reject: (e: Error) => void }>();
  const listeners: (() => void)[] = [];
  let next = 0;
  // The takes of one turn of the event loop go to the primary as one message (and come back as
  // one): a message costs a JSON encoding and a write on each side, more than a take itself.
  let queued: Take[] = [];
  const sendQueued = () => {
    const takes = queued;
    queued = [];
    send({ stockist: 'take', takes });
  };
  process.on('message', (m: unknown) => {
    if (!isMessage(m)) return;
    if (m.stockist === 'took') {
      for (const answer of m.answers) {
        const waiting = pending.get(answer.id);
        pending.delete(answer.id);
        if (answer.error) waiting?.reject(new Error(answer.error));
        else waiting?.resolve({ allowed: answer.allowed, tokens: answer.tokens });
      }
    } else if (m.stockist === 'tokens-cleared') {
      for (const listener of listeners) listener();
    }
  });
  // The primary is gone (killed): nothing supervises this process or holds its port any more. (A
  // stopping group never gets here: the primary waits for every process to exit before it does.)
  // No signal listener here: one would turn off SIGTERM's default action while the process is
  // still starting, before `serve` has put its own graceful one in place.
  process.on('disconnect', () => {
    for (const waiting of pending.values()) waiting.reject(new Error('the primary process is gone'));
    pending.clear();
    process.exit(1);
  });
  const send = (m: Message) => {
    if (process.connected) process.send?.(m);
  };
  return {
    buckets: {
      take(key, limits, cost) {
        if (!process.connected) return Promise.reject(new Error('the primary process is gone'));
        const id = next++;
        return new Promise((resolve, reject) => {
          pending.set(id, { resolve, reject });
          if (queued.push({ id, key, limits, cost }) === 1) setImmediate(sendQueued);
        });
      },
      async close() {},
    },
    announceTokensCleared: () => send({ stockist: 'tokens-cleared' }),
    onTokensCleared: (listener) => void listeners.push(listener),
  };
}

/** Tells the primary this process listens (the primary prints the banner once all of them do). */
export function reportListening(urls: { merchant: string; admin: string }): void {
  if (process.connected) process.send?.({ stockist: 'listening', urls } satisfies Message);
}

/** A process that dies sooner than this after starting is not started again (it would only die again). */
const STEADY_MS = 5_000;

export interface PrimaryOptions {
  processes: number;
  /** Called once every process listens, with the first one's addresses. */
  onListening(urls: { merchant: string; admin: string }): void;
  /** Called when the group has stopped (the pid file is released here); then the primary exits. */
  onStopped(): void;
}

/**
 * Runs the primary: forks the processes, keeps the shared buckets, relays the token-cache word,
 * replaces a process that dies, and stops them all on SIGTERM or SIGINT. Resolves at once; the
 * primary lives on its signal handlers and children.
 */
export function runPrimary(config: Config, options: PrimaryOptions): void {
  const log = pino({ level: config.logLevel, base: { pid: process.pid, role: 'primary' } });
  const buckets = memoryBuckets();
  const started = new Map<Worker, { index: number; at: number; listening: boolean }>();
  let stopping = false;
  let announced = false;
  let exitCode = 0;

  const fork = (index: number) => {
    const worker = cluster.fork({ [INDEX_VARIABLE]: String(index) });
    started.set(worker, { index, at: Date.now(), listening: false });
    worker.on('message', (m: unknown) => {
      if (!isMessage(m)) return;
      if (m.stockist === 'take') {
        // Taken in the order they came, so the one budget is spent in arrival order; answered together.
        const answers = m.takes.map((t) =>
          buckets.take(t.key, t.limits, t.cost).then(
            (r): Took => ({ id: t.id, allowed: r.allowed, tokens: r.tokens }),
            (error: Error): Took => ({ id: t.id, allowed: true, tokens: 0, error: error.message }),
          ),
        );
        void Promise.all(answers).then((list) => worker.isConnected() && worker.send({ stockist: 'took', answers: list } satisfies Message));
      } else if (m.stockist === 'tokens-cleared') {
        for (const other of started.keys()) if (other !== worker && other.isConnected()) other.send({ stockist: 'tokens-cleared' } satisfies Message);
      } else if (m.stockist === 'listening') {
        const entry = started.get(worker);
        if (entry) entry.listening = true;
        if (!announced && [...started.values()].filter((e) => e.listening).length === options.processes) {
          announced = true;
          options.onListening(m.urls);
          log.info({ processes: options.processes, pids: [...started.keys()].map((w) => w.process.pid) }, 'all processes listening');
        }
      }
    });
  };

  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping every process');
    for (const worker of started.keys()) worker.process.kill('SIGTERM');
    if (started.size === 0) finish();
  };
  const finish = () => {
    options.onStopped();
    process.exit(exitCode);
  };

  cluster.on('exit', (worker, code, signal) => {
    const entry = started.get(worker);
    started.delete(worker);
    if (stopping) {
      if (started.size === 0) finish();
      return;
    }
    const index = entry?.index ?? 0;
    // One that never listened, or died at once, would die again: the group stops instead (its
    // own output, on the shared stderr, says why).
    if (!entry?.listening || Date.now() - (entry?.at ?? 0) < STEADY_MS) {
      log.error({ index, code, signal }, 'a process stopped while starting; stopping the others');
      exitCode = 1;
      stop('a process failed');
      return;
    }
    log.warn({ index, code, signal }, 'a process ended; starting another in its place');
    fork(index);
  });

  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  for (let index = 0; index < options.processes; index++) fork(index);
}
