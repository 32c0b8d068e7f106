import type { Piscina } from 'piscina';
import type { PasswordCheck } from './password-strength.worker.ts';
import { onDemandPool, workerModule } from './worker-threads.ts';

/**
 * Where passwords' strength is estimated: one worker thread, started by the first check and ended
 * after `IDLE_MS` without one. zxcvbn-ts's dictionaries (~8.5 MB of code and strings to load,
 * ~16 MB more once ranked at the first check) then cost a server nothing while no password is
 * being set — which is nearly always — and a long password's estimate (tens of milliseconds, up
 * to ~140 ms under load) no longer holds the event loop. A check after an idle spell pays the
 * thread's start (~0.2–0.4 s, within a sign-up's argon2id hash anyway). Numbers and the
 * alternative (a lazy import on the main thread): docs/decisions.md, "Password strength off the
 * main thread".
 */
const IDLE_MS = 10_000;

let pool: Piscina<PasswordCheck, string | null> | null = null;

/** Why `password` may not be used (domain/password-strength.ts's `weakPasswordProblem`), or null. */
export function passwordProblemOf(password: string, userInputs: readonly string[]): Promise<string | null> {
  pool ??= onDemandPool({
    filename: workerModule(import.meta.dirname, 'password-strength.worker.ts', 'password-worker.js'),
    maxThreads: 1,
    idleTimeout: IDLE_MS,
  });
  return pool.run({ password, userInputs: [...userInputs] });
}
