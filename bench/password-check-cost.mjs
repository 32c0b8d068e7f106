#!/usr/bin/env node
/**
 * What a password-strength check costs the process that asks for it (Performance III, item 3), for
 * the two ways weighed in docs/decisions.md, "Password strength off the main thread", each in a
 * process of its own, on the built estimate (dist/password-worker.js; run `npm run build` first):
 *   --mode main    the estimate imported at the first check and run on the main thread
 *   --mode worker  on one worker thread started by the first check and ended after 10 s idle
 *                  (piscina, as services/password-checks.ts sets it up)
 * Prints RSS after a full collection (before any check, after the first, after the rest, after
 * `--idle` seconds with none), and for each check its time and the event loop's longest stall
 * meanwhile (a 1 ms timer's largest lateness). The password is 256 characters; 64 are estimated.
 *   node --expose-gc bench/password-check-cost.mjs --mode worker [--checks 5] [--idle 15]
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: { mode: { type: 'string', default: 'worker' }, checks: { type: 'string', default: '5' }, idle: { type: 'string', default: '15' } },
});
if (!globalThis.gc) throw new Error('run with --expose-gc');
const file = path.resolve(import.meta.dirname, '../dist/password-worker.js');

/** VmRSS (MB) after a full collection, and the process's threads. */
const rssMb = () => {
  globalThis.gc();
  globalThis.gc();
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  return { rss: Number(/^VmRSS:\s+(\d+)/m.exec(status)[1]) / 1024, threads: Number(/^Threads:\s+(\d+)/m.exec(status)[1]) };
};

let check;
if (args.mode === 'main') {
  check = async (task) => (await import(file)).default(task);
} else {
  const { Piscina } = await import('piscina');
  const pool = new Piscina({ filename: file, minThreads: 0, maxThreads: 1, idleTimeout: 10_000 });
  check = (task) => pool.run(task);
}

/** How long `work` took, and the largest lateness of a 1 ms interval timer meanwhile: how long the loop was held. */
async function timed(work) {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    last = now;
  }, 1);
  await sleep(5);
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  await sleep(5);
  clearInterval(timer);
  return { ms: Math.round(ms * 10) / 10, loopStallMs: Math.round(worst * 10) / 10 };
}

const task = { password: 'vX9#mQ2$kL8@pR4!tZ7&wN3*yB6^hJ5%'.repeat(8), userInputs: ['someone@shop.example', 'stockist'] };
const r = ({ rss, threads }) => `${Math.round(rss * 10) / 10} MB, ${threads} threads`;
const before = rssMb();
const first = await timed(() => check(task));
const afterFirst = rssMb();
const later = [];
for (let i = 1; i < Number(args.checks); i++) later.push(await timed(() => check(task)));
const afterChecks = rssMb();
await sleep(Number(args.idle) * 1000);
const afterIdle = rssMb();
console.log(
  JSON.stringify({
    mode: args.mode,
    node: process.version,
    rss: { before: r(before), afterFirstCheck: r(afterFirst), afterChecks: r(afterChecks), afterIdle: r(afterIdle), idleSeconds: Number(args.idle) },
    firstCheck: first,
    laterChecks: later,
  }),
);
process.exit(0);
