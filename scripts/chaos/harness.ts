/**
 * The crash test (issue 9, SPEC §11 "kill -9 under write load loses no acknowledged order or
 * refund and leaves stock equal to its ledger"). A real `stockist serve` process (TLS off) takes a
 * load of concurrent order creates, refunds and operator ships while this harness kills it with
 * SIGKILL at random moments and restarts it; then, with the API and the worker as separate
 * processes, it kills the worker the same way. Afterwards it checks, through the API and directly
 * in the database:
 *  - every order and refund that got a success response exists, exactly once (each request carries
 *    a unique `remark` tag, so a duplicate would show as two rows with one tag);
 *  - no tag has more than one row, even for requests that got no response and were retried;
 *  - stock equals its ledger for every row, never below zero; each order's sale rows and each
 *    successful refund's return rows match its items (all effects or none);
 *  - every pending refund is decided once a worker runs again (REFUND_AUTO_DELAY_MS small);
 *  - repeating a request whose response was received, with the same Idempotency-Key, returns the
 *    original result (`Idempotent-Replayed: true`), including after the crashes.
 * Claims after shipment (SPEC §18) ride the same load: a merchant opens a claim on a shipped split
 * order (with an Idempotency-Key) and the operator decides it — credited, reshipped in a replacement
 * order, or approved with the goods back (the merchant posts the return, the operator receives it),
 * then credited or reshipped — so kills land between and within decisions. A decision that got no
 * answer is followed up the way an operator would: read the claim, go on from its state. Afterwards
 * every credited claim carries exactly one `claim_credit` of its amount, every reshipped one exactly
 * one replacement order linked both ways, a claim's received goods are back in stock exactly once,
 * and an unresolved claim carries none of these (no half-made decision).
 * Between the two phases, backup cycles (SPEC §17): a `stockist backup` process runs beside the
 * server under the load and both are killed (-9) mid-backup, as soon as the backup's working folder
 * (its snapshot has begun) or its `.partial` archive appears; afterwards no file with an archive's
 * name is left that is not whole, `backup verify` and `restore` refuse each dot-file, the server
 * restarts (and the checks above cover it), and a new backup, taken under the load, passes
 * `backup verify`.
 * Used by `npm run chaos` (scripts/chaos.ts) and, in a short round, by test/e2e/chaos.test.ts.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { openStore, type Dialect, type Store } from '../../src/store/db.ts';
import { ledgerMismatches } from '../../src/store/stocks.repository.ts';
import { exited, freePort, runCli, runCliAsync, startProcess, tempDir } from '../../test/e2e/process.ts';

export interface ChaosOptions {
  dialect: Dialect;
  /** PostgreSQL: the server to create a throwaway database on. */
  pgUrl?: string;
  /** SIGKILLs of the all-in-one server under load, restarted each time (one more follows: the switch to split roles). */
  serverKills: number;
  /** SIGKILLs of the worker process (API and worker run as separate processes in this phase). */
  workerKills: number;
  /** Backup cycles: `stockist backup` and the all-in-one server killed together mid-backup, then a new backup verified. */
  backupKills?: number;
  /** Concurrent clients. */
  concurrency: number;
  /** After a (re)start, wait for this many answers, then up to `maxKillDelayMs` more, then kill. */
  answersBeforeKill: number;
  maxKillDelayMs: number;
  seed?: number;
  log?: (line: string) => void;
}

export interface ChaosSummary {
  dialect: Dialect;
  seed: number;
  serverKills: number;
  workerKills: number;
  /** Backup processes killed (with the server) while their archive was unfinished. */
  backupKills: number;
  requests: number;
  answered: number;
  noResponse: number;
  acknowledged: { orders: number; refunds: number; ships: number; claims: number; claimDecisions: number };
  /** Claim decisions (approve, return, receive) sent while the server died: no answer, followed up from the claim's state. */
  claimDecisionsUnanswered: number;
  rejected: number;
  verified: {
    orders: number;
    refunds: number;
    ships: number;
    replays: number;
    retriedUnknown: number;
    stockRows: number;
    refundsDecided: number;
    /** `stockist ledger verify` runs that passed: after every restart, and at the end (SPEC §15). */
    ledgerVerified: number;
    /** Acknowledged orders with exactly one charge, succeeded refunds with exactly one credit. */
    charges: number;
    credits: number;
    /** Archives `backup verify` passed: each backup after a killed one (and any that finished before its kill). */
    backups: number;
    /** Dot-files of killed backups that both `backup verify` and `restore` refused. */
    partialsRefused: number;
    /** Acknowledged claims stored exactly once, each in the state its last answer gave (when no later step went unanswered). */
    claims: number;
    /** Credited claims with exactly one `claim_credit` of their amount and one credit resolution. */
    claimsCredited: number;
    /** Reshipped claims with exactly one replacement order, linked both ways (`replacementOrderId`, `customOrderId`). */
    claimsReshipped: number;
    /** Claims whose goods came back: their lines back in stock exactly once (`claim_return`). */
    claimsReturned: number;
  };
  failures: string[];
}

const ADMIN_KEY = 'chaos-admin-key-0123456789';
const SKUS = Array.from({ length: 8 }, (_, i) => `DEMO-${String(i + 1).padStart(4, '0')}`);
const ADDRESS = { country: 'US', phone: '+1 555 0100', recipient: 'Chaos Test', province: 'CA', city: 'LA', street1: '1 Main St', zip: '90001' };

type Kind = 'order' | 'refund' | 'ship' | 'claim' | 'decision';
interface Sent {
  kind: Kind;
  tag: string;
  key: string | null;
  url: string;
  body: unknown;
  admin: boolean;
  /** answered: a 2xx/4xx response was received; unknown: no response, or 5xx. */
  outcome: 'pending' | 'ok' | 'rejected' | 'unknown';
  status?: number;
  code?: number;
  data?: unknown;
}
interface AckedOrder {
  id: string;
  items: { id: string; quantity: number }[];
  splitIds: string[];
}
/** An opened claim as the client last saw it. */
interface AckedClaim {
  claimNo: string;
  tag: string;
  /** The status of the last answer (a decision's, or a read after a decision that got none). */
  status: string;
  /** A step after that answer got no answer: its outcome is not known to the client. */
  uncertain: boolean;
}

/** A small seeded PRNG (mulberry32) so a failing run can be repeated with --seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)), pick: <T>(xs: T[]) => xs[Math.floor(next() * xs.length)] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A throwaway database: a SQLite file in the temp dir, or a fresh PostgreSQL database. */
export async function makeDatabase(dialect: Dialect, dir: string, pgUrl?: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') return { url: `sqlite:${path.join(dir, 'chaos.db')}`, drop: async () => undefined };
  if (!pgUrl) throw new Error('PostgreSQL chaos needs a database URL (TEST_DATABASE_URL or --pg)');
  const name = `chaos_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function runChaos(options: ChaosOptions): Promise<ChaosSummary> {
  const seed = options.seed ?? Date.now() % 1_000_000;
  const rnd = prng(seed);
  const log = options.log ?? (() => undefined);
  const dir = tempDir();
  const database = await makeDatabase(options.dialect, dir, options.pgUrl);
  const env = {
    DATA_DIR: dir,
    DATABASE_URL: database.url,
    TLS: 'off',
    // Errors only: a 500 is looked up in the servers' output by its request id.
    LOG_LEVEL: 'error',
    STOCKIST_ENV: 'sandbox',
    ADMIN_API_KEY: ADMIN_KEY,
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    REFUND_REVIEW: 'auto',
    REFUND_AUTO_DELAY_MS: '300',
    // A killed worker's claims lapse quickly, so its refunds are retried within the run.
    REFUND_CLAIM_MS: '1500',
    SEED: 'demo',
  };
  const summary: ChaosSummary = {
    dialect: options.dialect,
    seed,
    serverKills: 0,
    workerKills: 0,
    backupKills: 0,
    requests: 0,
    answered: 0,
    noResponse: 0,
    acknowledged: { orders: 0, refunds: 0, ships: 0, claims: 0, claimDecisions: 0 },
    claimDecisionsUnanswered: 0,
    rejected: 0,
    verified: {
      orders: 0,
      refunds: 0,
      ships: 0,
      replays: 0,
      retriedUnknown: 0,
      stockRows: 0,
      refundsDecided: 0,
      ledgerVerified: 0,
      charges: 0,
      credits: 0,
      backups: 0,
      partialsRefused: 0,
      claims: 0,
      claimsCredited: 0,
      claimsReshipped: 0,
      claimsReturned: 0,
    },
    failures: [],
  };
  const fail = (message: string) => {
    if (summary.failures.length < 50) summary.failures.push(message);
  };
  const children = new Set<ChildProcess>();
  // A run cut short (a test's timeout, then its file's watchdog exiting the process) must not leave
  // servers and backups running: they would hold the machine for the rest of the suite.
  const killChildren = () => {
    for (const child of children) child.kill('SIGKILL');
  };
  process.once('exit', killChildren);
  const outputs: (() => string)[] = [];
  const logFor = (requestId: string) =>
    outputs
      .flatMap((o) => o().split('\n'))
      .filter((line) => line.includes(requestId))
      .join('\n');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;

  const start = async (role: 'all' | 'api' | 'worker', listen = port) => {
    const p = await startProcess(['serve', '--role', role, '--port', String(listen)], env, /Stockist listening/);
    children.add(p.child);
    outputs.push(p.output);
    p.child.once('exit', () => children.delete(p.child));
    await ledgerVerify(`after starting --role ${role}`);
    return p.child;
  };
  // SPEC §15: the money ledger holds after every crash, checked by the real command while the load
  // goes on (each invariant is one statement, so it reads one committed state).
  const ledgerVerify = async (when: string) => {
    const r = runCli(['ledger', 'verify'], env);
    if (r.status === 0) summary.verified.ledgerVerified++;
    else fail(`stockist ledger verify ${when} exited ${r.status}: ${(r.stdout + r.stderr).trim().split('\n').slice(0, 5).join(' | ')}`);
  };
  const kill = async (child: ChildProcess) => {
    child.kill('SIGKILL');
    await exited(child);
  };

  // --- the load -------------------------------------------------------------------------------
  let token = '';
  let up = true;
  let answeredSinceStart = 0;
  let stopped = false;
  let counter = 0;
  const sent: Sent[] = [];
  const orders: AckedOrder[] = [];
  /** The SKUs of each acknowledged order's split orders, and the split orders an acknowledged ship shipped. */
  const splitSkus = new Map<string, string[]>();
  const shippedSplits: string[] = [];
  const claims: AckedClaim[] = [];
  /** Claim decisions sent and not answered yet: a server kill waits a little for one, so kills land within decisions. */
  let decisionsInFlight = 0;

  const call = async (method: string, url: string, body: unknown, admin: boolean, key: string | null) => {
    const headers: Record<string, string> = { authorization: `Bearer ${admin ? ADMIN_KEY : token}`, 'content-type': 'application/json' };
    if (key) headers['idempotency-key'] = key;
    const r = await fetch(base + url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(15_000) });
    const text = await r.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON: checked by the caller
    }
    return { status: r.status, json, replayed: r.headers.get('idempotent-replayed') === 'true' };
  };

  /** Sends one request and records what came back; a lost connection or a 5xx is "unknown". */
  const send = async (s: Sent) => {
    summary.requests++;
    try {
      const r = await call('POST', s.url, s.body, s.admin, s.key);
      if (r.status >= 500) {
        s.outcome = 'unknown';
        if (r.json?.code !== 50300) fail(`${s.kind} ${s.tag}: ${r.status} ${JSON.stringify(r.json)}\n${logFor(r.json?.requestId ?? '?')}`);
        return r;
      }
      summary.answered++;
      answeredSinceStart++;
      s.status = r.status;
      s.code = r.json?.code;
      s.data = r.json?.data;
      s.outcome = r.status === 200 ? 'ok' : 'rejected';
      return r;
    } catch {
      s.outcome = 'unknown';
      return null;
    }
  };

  const createOrder = async () => {
    const n = ++counter;
    const lines = Array.from({ length: rnd.int(1, 3) }, () => ({ sku: rnd.pick(SKUS), quantity: rnd.int(1, 3) }));
    const body: Record<string, unknown> = { orderAddress: ADDRESS, orderItemsList: lines, remark: `chaos:o:${n}` };
    if (rnd.next() < 0.15) body.customOrderId = `chaos-c-${n}`;
    const s: Sent = {
      kind: 'order',
      tag: `chaos:o:${n}`,
      key: rnd.next() < 0.75 ? `chaos-o-${n}-${seed}` : null,
      url: '/openapi/v1/order/orders',
      body,
      admin: false,
      outcome: 'pending',
    };
    sent.push(s);
    // A client that got no response retries the same request (same key) a few times.
    for (let attempt = 0; attempt < 3; attempt++) {
      await send(s);
      if (s.outcome !== 'unknown' || !s.key || stopped) break;
      await waitUp();
    }
    if (s.outcome === 'ok') {
      summary.acknowledged.orders++;
      try {
        const r = await call('GET', `/admin/v1/orders/${s.data}`, undefined, true, null);
        if (r.status === 200) {
          const items: { id: string; productNum: number; skuCode: string }[] = r.json.data.orderItems;
          const splits: { id: string; itemIds: string[] }[] = r.json.data.splitOrders;
          orders.push({ id: String(s.data), items: items.map((i) => ({ id: i.id, quantity: i.productNum })), splitIds: splits.map((x) => x.id) });
          for (const split of splits) splitSkus.set(split.id, [...new Set(items.filter((i) => split.itemIds.includes(i.id)).map((i) => i.skuCode))]);
        } else if (r.status === 404) fail(`order ${s.data} (${s.tag}) acknowledged but not found`);
      } catch {
        // the server died; the order is verified at the end anyway
      }
    }
  };

  const requestRefund = async () => {
    if (orders.length === 0) return createOrder();
    const o = rnd.pick(orders);
    const n = ++counter;
    const body: Record<string, unknown> = { remark: `chaos:r:${n}`, refundReason: 'Other' };
    if (rnd.next() < 0.6) {
      const item = rnd.pick(o.items);
      body.orderItems = [{ itemId: item.id, quantity: 1 }];
    }
    const s: Sent = {
      kind: 'refund',
      tag: `chaos:r:${n}`,
      key: rnd.next() < 0.75 ? `chaos-r-${n}-${seed}` : null,
      url: `/openapi/v2/order/orders/${o.id}/refund`,
      body,
      admin: false,
      outcome: 'pending',
    };
    sent.push(s);
    for (let attempt = 0; attempt < 3; attempt++) {
      await send(s);
      if (s.outcome !== 'unknown' || !s.key || stopped) break;
      await waitUp();
    }
    if (s.outcome === 'ok') summary.acknowledged.refunds++;
  };

  const ship = async () => {
    const withSplits = orders.filter((o) => o.splitIds.length > 0);
    if (withSplits.length === 0) return createOrder();
    const splitId = rnd.pick(rnd.pick(withSplits).splitIds);
    const n = ++counter;
    const s: Sent = {
      kind: 'ship',
      tag: splitId,
      key: null,
      url: `/admin/v1/split-orders/${splitId}/ship`,
      body: { carrier: 'UPS', trackingCode: `1Z${n}` },
      admin: true,
      outcome: 'pending',
    };
    sent.push(s);
    await send(s);
    if (s.outcome === 'ok') {
      summary.acknowledged.ships++;
      shippedSplits.push(splitId);
    }
  };

  /**
   * SPEC §18 under the kills: open a claim on a shipped split order, then decide it — credit,
   * reship, or the goods back first (approve with returnRequired, the merchant's return, the
   * operator's receipt). A step that gets no answer is followed up as an operator would: once the
   * server is back, read the claim and go on from the state it is in.
   */
  const claimAfterShipment = async () => {
    const claimable = shippedSplits.filter((id) => splitSkus.has(id));
    if (claimable.length === 0) return ship();
    const splitId = rnd.pick(claimable);
    const n = ++counter;
    const tag = `chaos:c:${n}`;
    const resolution = rnd.next() < 0.5 ? 'refund' : 'reship';
    const withReturn = rnd.next() < 0.35;
    const opened: Sent = {
      kind: 'claim',
      tag,
      key: rnd.next() < 0.85 ? `chaos-c-${n}-${seed}` : null,
      url: '/openapi/v1/claims',
      body: {
        orderId: splitId,
        reason: rnd.pick(['not_received', 'damaged', 'wrong_item', 'missing_parts', 'quality']),
        resolution,
        items: [{ sku: rnd.pick(splitSkus.get(splitId)!), quantity: 1 }],
        description: tag,
      },
      admin: false,
      outcome: 'pending',
    };
    sent.push(opened);
    for (let attempt = 0; attempt < 3; attempt++) {
      await send(opened);
      if (opened.outcome !== 'unknown' || !opened.key || stopped) break;
      await waitUp();
    }
    if (opened.outcome !== 'ok') return;
    summary.acknowledged.claims++;
    const claim: AckedClaim = { claimNo: String((opened.data as { claimNo: string }).claimNo), tag, status: 'open', uncertain: false };
    claims.push(claim);
    const admin = `/admin/v1/claims/${claim.claimNo}`;
    let returnPosted = false;
    for (let step = 0; step < 6 && !stopped; step++) {
      let s: Sent;
      if (claim.status === 'open') s = decision(`${admin}/approve`, withReturn ? { returnRequired: true } : {}, true);
      else if (claim.status === 'awaiting_return' && !returnPosted)
        s = decision(`/openapi/v1/claims/${claim.claimNo}/return`, { carrier: 'UPS', trackingCode: `RET${n}` }, false, `chaos-ret-${n}-${seed}`);
      else if (claim.status === 'awaiting_return') s = decision(`${admin}/received`, { warehouseCode: rnd.pick(['G007', 'US01']) }, true);
      else return; // credited or reshipped (or left approved/received by a reshipment that could not be made)
      decisionsInFlight++;
      await send(s).finally(() => decisionsInFlight--);
      if (s.outcome === 'ok') {
        summary.acknowledged.claimDecisions++;
        claim.status = (s.data as { status: string }).status;
        claim.uncertain = false;
        if (s.url.endsWith('/return')) returnPosted = true;
        continue;
      }
      // 40900: the same key's attempt that died with the server is still marked in flight; the verification reads the claim.
      if (s.outcome === 'rejected' && s.code === 40900) return;
      if (s.outcome === 'rejected')
        return fail(`claim ${claim.claimNo} (${tag}): ${s.url} refused ${s.status}/${s.code} while the client saw it ${claim.status}`);
      // No answer: the server died. Once it is back, read where the claim is and go on from there.
      summary.claimDecisionsUnanswered++;
      claim.uncertain = true;
      await waitUp();
      if (stopped) return;
      try {
        const r = await call('GET', admin, undefined, true, null);
        if (r.status !== 200) return fail(`claim ${claim.claimNo} (${tag}) read after a lost answer: ${r.status} ${JSON.stringify(r.json)}`);
        claim.status = r.json.data.status;
        claim.uncertain = false;
        returnPosted = r.json.data.returnTracking !== null;
      } catch {
        return; // died again: the verification reads the claim
      }
    }
  };
  const decision = (url: string, body: unknown, admin: boolean, key: string | null = null): Sent => {
    const s: Sent = { kind: 'decision', tag: url, key, url, body, admin, outcome: 'pending' };
    sent.push(s);
    return s;
  };

  const waitUp = async () => {
    while (!up && !stopped) await sleep(20);
  };

  const client = async () => {
    while (!stopped) {
      await waitUp();
      if (stopped) break;
      const roll = rnd.next();
      await (roll < 0.5 ? createOrder() : roll < 0.75 ? requestRefund() : roll < 0.88 ? ship() : claimAfterShipment());
    }
  };

  // --- backups ----------------------------------------------------------------------------------
  const backupDir = path.join(dir, 'backups');
  // An empty DATA_DIR to try restoring dot-files into: never the live database.
  const scratchDir = path.join(dir, 'restore-scratch');
  const ARCHIVE_NAME = /^stockist-(sqlite|postgres)-\d{8}T\d{6}Z\.tar$/;
  const checkedArchives = new Set<string>();
  const backupVerify = async (file: string, when: string) => {
    const r = await runCliAsync(['backup', 'verify', file], env);
    if (r.status === 0 && /^backup verify: every checksum, the ledger, stock = stock ledger and the counts hold$/m.test(r.stdout)) summary.verified.backups++;
    else fail(`backup verify of ${path.basename(file)} ${when} exited ${r.status}: ${(r.stdout + r.stderr).trim().split('\n').slice(-5).join(' | ')}`);
    checkedArchives.add(path.basename(file));
  };
  /** What a killed backup left: a file with an archive's name must be whole; a dot-file is refused by verify and restore. */
  const checkLeftovers = async () => {
    for (const f of fs.readdirSync(backupDir)) {
      const file = path.join(backupDir, f);
      if (ARCHIVE_NAME.test(f)) {
        if (!checkedArchives.has(f)) await backupVerify(file, 'left by a killed backup (it has an archive’s name, so it must be whole)');
        continue;
      }
      // The working folder (`.…work-<pid>`): removed by the next backup, checked there.
      if (!fs.statSync(file).isFile()) continue;
      fs.mkdirSync(scratchDir, { recursive: true });
      const verify = await runCliAsync(['backup', 'verify', file], env);
      const restore = await runCliAsync(['restore', file], { ...env, DATA_DIR: scratchDir, DATABASE_URL: `sqlite:${path.join(scratchDir, 'stockist.db')}` });
      const oneLine = (r: { status: number | null; stderr: string }, start: string) =>
        r.status === 1 &&
        r.stderr.trim().split('\n').length === 1 &&
        r.stderr.startsWith(start) &&
        /a \.partial file is an unfinished backup$/.test(r.stderr.trim());
      if (
        oneLine(verify, 'stockist: backup verify failed: ') &&
        oneLine(restore, 'stockist: restore refused, nothing was changed: ') &&
        fs.readdirSync(scratchDir).length === 0
      )
        summary.verified.partialsRefused++;
      else
        fail(
          `${f}, left by a killed backup, was not refused: verify ${verify.status} ${verify.stderr.trim()}; restore ${restore.status} ${restore.stderr.trim()}`,
        );
    }
  };
  /** The checks that follow a killed backup, run while the load goes on (awaited before the next cycle and the verification). */
  let backupChecks: Promise<void> = Promise.resolve();
  /**
   * One backup cycle: `stockist backup` beside the all-in-one server under the load, both SIGKILLed
   * the moment the backup's working folder or its `.partial` archive appears (a watch on the folder,
   * so the kill lands within the copy, which takes well under a second on a small database). A
   * backup that still finished first (its archive must then be whole) takes the server down all
   * the same, and the cycle is tried again, at the snapshot, up to three times in all. Returns the
   * restarted server.
   */
  const backupCycle = async (server: ChildProcess): Promise<ChildProcess> => {
    // One backup at a time in the folder: the previous cycle's checks and backup come first.
    await backupChecks;
    fs.mkdirSync(backupDir, { recursive: true });
    for (let attempt = 1; ; attempt++) {
      answeredSinceStart = 0;
      while (answeredSinceStart < options.answersBeforeKill) await sleep(10);
      // The archive phase is short on SQLite (tens of milliseconds): a retry kills at the snapshot.
      const trigger = attempt === 1 && rnd.next() < 0.5 ? '.partial' : '.work-';
      let backup: ChildProcess | null = null;
      const killBoth = () => {
        backup?.kill('SIGKILL');
        server.kill('SIGKILL');
      };
      const watcher = fs.watch(backupDir, (_event, name) => {
        if (name?.includes(trigger)) killBoth();
      });
      const r = await runCliAsync(['backup', '--to', backupDir], env, (child) => {
        backup = child;
        children.add(child);
        child.once('exit', () => children.delete(child));
      }).finally(() => watcher.close());
      killBoth();
      await exited(server);
      up = false;
      const leftArchive = fs.readdirSync(backupDir).some((f) => ARCHIVE_NAME.test(f) && !checkedArchives.has(f));
      const midway = r.signal === 'SIGKILL' && !leftArchive;
      if (midway) summary.backupKills++;
      else if (r.status !== 0 && r.signal !== 'SIGKILL') fail(`stockist backup under load exited ${r.status}: ${r.stderr.trim()}`);
      log(
        midway
          ? `  killed a backup (at its ${trigger === '.work-' ? 'snapshot' : 'archive'}) and the server (${summary.backupKills}/${options.backupKills}) after ${summary.requests} requests`
          : `  a backup finished before its kill landed (attempt ${attempt}); the server was killed`,
      );
      server = await start('all');
      up = true;
      if (midway) break;
      await checkLeftovers();
      if (attempt === 3) {
        fail('no kill of three landed while the backup was unfinished');
        return server;
      }
    }
    // In the background while the run goes on (the restarted server needs none of it): what the
    // killed backup left, then the next backup under the load, which must succeed, clear those
    // leftovers and pass `backup verify`.
    backupChecks = (async () => {
      await checkLeftovers();
      const next = await runCliAsync(['backup', '--to', backupDir], env);
      const file = /^backup (\S+\.tar) /m.exec(next.stdout)?.[1];
      if (next.status !== 0 || !file) return fail(`the backup after a killed one exited ${next.status}: ${next.stderr.trim()}`);
      const leftovers = fs.readdirSync(backupDir).filter((f) => f.startsWith('.'));
      if (leftovers.length) fail(`the backup after a killed one left ${leftovers.join(', ')} in place`);
      await backupVerify(file, 'after a killed backup');
    })().catch((error: unknown) => fail(`backup checks: ${String(error)}`));
    return server;
  };

  const killAtRandom = async (child: ChildProcess, role: 'server' | 'worker') => {
    answeredSinceStart = 0;
    while (answeredSinceStart < options.answersBeforeKill) await sleep(10);
    await sleep(rnd.int(0, options.maxKillDelayMs));
    // A server dies while a claim is being decided, when one comes within a second (the other requests are in flight too).
    for (let i = 0; role === 'server' && i < 100 && decisionsInFlight === 0; i++) await sleep(10);
    await kill(child);
  };

  let store = null as Store | null;
  try {
    // --- set-up: demo data, plenty of stock on a few SKUs so requests contend for the same rows
    let server = await start('all');
    token = fs.readFileSync(path.join(dir, 'demo-token-sandbox'), 'utf8').trim();
    const stock = await call(
      'PUT',
      '/admin/v1/stocks',
      { items: SKUS.flatMap((sku) => ['G007', 'US01'].map((warehouseCode) => ({ sku, warehouseCode, qty: 100_000 }))) },
      true,
      null,
    );
    if (stock.status !== 200) throw new Error(`stock set-up failed: ${JSON.stringify(stock.json)}`);

    // --- phase 1: kill -9 the all-in-one server under load
    const clients = Array.from({ length: options.concurrency }, () => client());
    for (let i = 0; i < options.serverKills; i++) {
      await killAtRandom(server, 'server');
      up = false;
      summary.serverKills++;
      log(`  killed the server (${summary.serverKills}/${options.serverKills}) after ${summary.requests} requests`);
      server = await start('all');
      up = true;
    }
    for (let i = 0; i < (options.backupKills ?? 0); i++) server = await backupCycle(server);

    // --- phase 2: API and worker as separate processes; kill -9 the worker
    await killAtRandom(server, 'server');
    up = false;
    summary.serverKills++;
    log(`  killed the server (${summary.serverKills}) after ${summary.requests} requests; restarting as --role api + --role worker`);
    server = await start('api');
    let worker = await start('worker', await freePort());
    up = true;
    for (let i = 0; i < options.workerKills; i++) {
      await killAtRandom(worker, 'worker');
      summary.workerKills++;
      log(`  killed the worker (${summary.workerKills}/${options.workerKills})`);
      worker = await start('worker', await freePort());
    }
    stopped = true;
    await Promise.all(clients);
    // The last backup cycle's checks may still run (a PostgreSQL verify restores into a scratch database).
    await backupChecks;

    // --- verification ----------------------------------------------------------------------------
    // One last crash of both, then a fresh all-in-one server (worker included) decides what is pending.
    await Promise.all([kill(server), kill(worker)]);
    server = await start('all');
    up = true;
    stopped = false;
    await verify();
    await kill(server);
  } finally {
    killChildren();
    process.off('exit', killChildren);
    await store?.close();
    await database.drop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return summary;

  async function verify() {
    // Requests that never got an answer: the client retries them once more with the same key. Each
    // must answer as a normal request would (the original order, or one made now), or 409/40900
    // when its crashed attempt is still marked in flight (taken over after 60 s).
    for (const s of sent.filter((x) => x.outcome === 'unknown' && x.key)) {
      await send(s);
      if (s.outcome === 'unknown') fail(`retry of ${s.tag} got no answer`);
      else if (s.outcome === 'ok' || s.code !== 40900) summary.verified.retriedUnknown++;
      if (s.outcome === 'ok' && s.kind === 'order') summary.acknowledged.orders++;
      if (s.outcome === 'ok' && s.kind === 'refund') summary.acknowledged.refunds++;
      if (s.outcome === 'ok' && s.kind === 'claim') summary.acknowledged.claims++;
    }
    // Answered requests with a key replay the stored answer (40900 "in flight" is not stored).
    for (const s of sent.filter((x) => x.key && (x.outcome === 'ok' || (x.outcome === 'rejected' && x.code !== 40900)))) {
      const r = await call('POST', s.url, s.body, s.admin, s.key);
      if (r.status !== s.status || r.json?.code !== s.code || JSON.stringify(r.json?.data) !== JSON.stringify(s.data ?? null)) {
        fail(`replay of ${s.tag} (${s.key}) answered ${r.status} ${JSON.stringify(r.json)} instead of ${s.status} ${JSON.stringify(s.data)}`);
      } else if (s.outcome === 'ok' && !r.replayed) fail(`replay of ${s.tag} lacks Idempotent-Replayed`);
      else summary.verified.replays++;
    }

    store = await openStore(database.url);
    const db = store.db;
    // Every pending refund gets decided by the restarted worker.
    for (let i = 0; i < 300; i++) {
      const pending = await db
        .selectFrom('refunds')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', 'pending_review')
        .executeTakeFirstOrThrow();
      if (Number(pending.n) === 0) break;
      if (i === 299) fail(`${pending.n} refunds are still pending`);
      await sleep(100);
    }
    summary.verified.refundsDecided = Number(
      (
        await db
          .selectFrom('refunds')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('status', '!=', 'pending_review')
          .executeTakeFirstOrThrow()
      ).n,
    );

    // Exactly once: each tag names at most one row, and each acknowledged one names its row.
    // A claim's replacement order (customOrderId `claim-<claimNo>`) is the server's, not a client's: checked with the claims.
    const orderRows = (await db.selectFrom('orders').select(['id', 'remark', 'custom_order_id']).execute()).filter(
      (o) => !o.custom_order_id?.startsWith('claim-'),
    );
    const refundRows = await db.selectFrom('refunds').select(['id', 'remark', 'status']).execute();
    const byTag = (rows: { id: number; remark: string | null }[]) => {
      const m = new Map<string, number[]>();
      for (const r of rows) m.set(r.remark ?? '', [...(m.get(r.remark ?? '') ?? []), r.id]);
      return m;
    };
    const orderTags = byTag(orderRows);
    const refundTags = byTag(refundRows);
    for (const [tag, ids] of [...orderTags, ...refundTags]) if (ids.length > 1) fail(`${tag} was written ${ids.length} times (${ids.join(', ')})`);
    const known = new Set(sent.map((s) => s.tag));
    for (const tag of [...orderTags.keys(), ...refundTags.keys()]) if (!known.has(tag)) fail(`row with unknown tag ${tag}`);
    for (const s of sent.filter((x) => x.outcome === 'ok')) {
      if (s.kind !== 'order' && s.kind !== 'refund') continue;
      const ids = (s.kind === 'order' ? orderTags : refundTags).get(s.tag) ?? [];
      if (ids.length !== 1 || String(ids[0]) !== String(s.data)) fail(`acknowledged ${s.kind} ${s.tag} → ${s.data} is stored as [${ids.join(', ')}]`);
      else summary.verified[s.kind === 'order' ? 'orders' : 'refunds']++;
    }
    // An acknowledged ship left its split order shipped (or delivered).
    const shipped = new Set(
      (await db.selectFrom('split_orders').select('id').where('status', 'in', ['shipped', 'completed']).execute()).map((r) => String(r.id)),
    );
    for (const s of sent.filter((x) => x.kind === 'ship' && x.outcome === 'ok')) {
      if (shipped.has(s.tag)) summary.verified.ships++;
      else fail(`acknowledged ship of split order ${s.tag} is not shipped`);
    }

    // Stock: equal to the ledger, never negative, and every order's and refund's effects complete.
    const mismatches = await ledgerMismatches(db);
    for (const m of mismatches) fail(`stock ${m.productId}/${m.warehouseId}: qty ${m.qty} but ledger ${m.ledger}`);
    const rows = await db.selectFrom('stocks').select(['qty']).execute();
    summary.verified.stockRows = rows.length - mismatches.length;
    if (rows.some((r) => r.qty < 0)) fail('a stock row is below zero');
    const saleGaps = await sql<{ order_id: number }>`
      select i.order_id from (select order_id, sum(quantity) as q from order_items group by order_id) i
      left join (select order_id, -sum(delta) as q from stock_ledger where kind = 'sale' group by order_id) l on l.order_id = i.order_id
      where l.q is null or l.q <> i.q`.execute(db);
    for (const g of saleGaps.rows) fail(`order ${g.order_id}: its sale ledger rows do not match its items`);
    const returnGaps = await sql<{ id: number }>`
      select r.id from refunds r
      left join (select refund_id, sum(quantity) as q from refund_items group by refund_id) i on i.refund_id = r.id
      left join (select refund_id, sum(delta) as q from stock_ledger where kind = 'return' group by refund_id) l on l.refund_id = r.id
      where (r.status = 'refund_successfully' and (l.q is null or l.q <> i.q)) or (r.status <> 'refund_successfully' and l.q is not null)`.execute(db);
    for (const g of returnGaps.rows) fail(`refund ${g.id}: its return ledger rows do not match its state`);
    const itemGaps = await sql<{ id: number }>`
      select oi.id from order_items oi
      left join (select ri.order_item_id, sum(ri.quantity) as q from refund_items ri join refunds r on r.id = ri.refund_id
                 where r.status = 'refund_successfully' group by ri.order_item_id) d on d.order_item_id = oi.id
      where oi.refunded_quantity <> coalesce(d.q, 0) or oi.pending_refund_quantity <> 0`.execute(db);
    for (const g of itemGaps.rows) fail(`order item ${g.id}: refunded/pending quantities disagree with its refunds`);

    // Money (SPEC §15): one charge per acknowledged order, one credit per succeeded refund, and every invariant.
    const charges = await db.selectFrom('journal_entries').select(['order_id']).where('type', '=', 'order_charge').execute();
    const chargesOf = new Map<number, number>();
    for (const c of charges) chargesOf.set(Number(c.order_id), (chargesOf.get(Number(c.order_id)) ?? 0) + 1);
    for (const s of sent.filter((x) => x.outcome === 'ok' && x.kind === 'order')) {
      const n = chargesOf.get(Number(s.data)) ?? 0;
      if (n === 1) summary.verified.charges++;
      else fail(`acknowledged order ${s.data} carries ${n} charges`);
    }
    const credits = await db.selectFrom('journal_entries').select(['refund_id']).where('type', '=', 'refund_credit').execute();
    const creditsOf = new Map<number, number>();
    for (const c of credits) creditsOf.set(Number(c.refund_id), (creditsOf.get(Number(c.refund_id)) ?? 0) + 1);
    for (const r of refundRows.filter((x) => x.status === 'refund_successfully')) {
      const n = creditsOf.get(Number(r.id)) ?? 0;
      if (n === 1) summary.verified.credits++;
      else fail(`succeeded refund ${r.id} carries ${n} credits`);
    }
    await checkClaims(db, sent, claims, summary, fail);
    await ledgerVerify('at the end');
    summary.noResponse = sent.filter((s) => s.outcome === 'unknown').length;
    summary.rejected = sent.filter((s) => s.outcome === 'rejected').length;
  }
}

/**
 * SPEC §18 after the kills: each claim opened once per tag, in the state its last answer gave, and
 * each decision whole — a credit posted once, a replacement order made once and linked both ways,
 * received goods back in stock once — or not there at all.
 */
async function checkClaims(db: Store['db'], sent: Sent[], claims: AckedClaim[], summary: ChaosSummary, fail: (message: string) => void) {
  const rows = await db
    .selectFrom('claims')
    .select(['id', 'merchant_id', 'order_id', 'status', 'description', 'amount_cents', 'replacement_order_id', 'return_required', 'received_at'])
    .execute();
  const byTag = new Map<string, number[]>();
  for (const c of rows) byTag.set(c.description ?? '', [...(byTag.get(c.description ?? '') ?? []), c.id]);
  for (const [tag, ids] of byTag) if (ids.length > 1) fail(`claim ${tag} was opened ${ids.length} times (${ids.join(', ')})`);
  for (const s of sent.filter((x) => x.kind === 'claim' && x.outcome === 'ok')) {
    const ids = byTag.get(s.tag) ?? [];
    const claimNo = String((s.data as { claimNo: string }).claimNo);
    if (ids.length !== 1 || String(ids[0]) !== claimNo) fail(`acknowledged claim ${s.tag} → ${claimNo} is stored as [${ids.join(', ')}]`);
  }
  const statusOf = new Map(rows.map((c) => [String(c.id), c.status as string]));
  for (const c of claims) {
    const status = statusOf.get(c.claimNo);
    if (!c.uncertain && status !== c.status) fail(`claim ${c.claimNo} (${c.tag}) answered ${c.status} last but is ${status}`);
    else summary.verified.claims++;
  }

  const credits = await db.selectFrom('journal_entries').select(['id', 'cause', 'amount_cents', 'order_id']).where('type', '=', 'claim_credit').execute();
  const resolutions = await db.selectFrom('claim_resolutions').select(['claim_id', 'kind', 'journal_entry_id', 'replacement_order_id']).execute();
  const replacements = await db.selectFrom('orders').select(['id', 'merchant_id', 'custom_order_id']).where('custom_order_id', 'like', 'claim-%').execute();
  const lines = await db.selectFrom('claim_lines').select(['claim_id', 'quantity']).execute();
  const replacementItems = await db
    .selectFrom('order_items')
    .select(['order_id', 'quantity'])
    .where('order_id', 'in', replacements.map((o) => o.id).concat([-1]))
    .execute();
  const sum = <T>(xs: T[], pick: (x: T) => number) => xs.reduce((n, x) => n + pick(x), 0);
  for (const c of rows) {
    const cause = `claim:${c.id}`;
    const itsCredits = credits.filter((e) => e.cause === cause);
    const itsResolutions = resolutions.filter((r) => r.claim_id === c.id);
    const itsReplacements = replacements.filter((o) => o.custom_order_id === `claim-${c.id}`);
    const claimed = sum(
      lines.filter((l) => l.claim_id === c.id),
      (l) => l.quantity,
    );
    if (c.status === 'credited') {
      const r = itsResolutions[0];
      if (itsCredits.length !== 1 || itsCredits[0].amount_cents !== c.amount_cents || Number(itsCredits[0].order_id) !== c.order_id)
        fail(
          `credited claim ${c.id} carries ${itsCredits.length} claim credits (${itsCredits.map((e) => e.amount_cents).join(', ')}; its amount ${c.amount_cents})`,
        );
      else if (itsResolutions.length !== 1 || r.kind !== 'credit' || Number(r.journal_entry_id) !== Number(itsCredits[0].id))
        fail(`credited claim ${c.id}: its resolution rows ${JSON.stringify(itsResolutions)} do not name its credit`);
      else if (itsReplacements.length || c.replacement_order_id !== null) fail(`credited claim ${c.id} has a replacement order too`);
      else summary.verified.claimsCredited++;
    } else if (c.status === 'reshipped') {
      const r = itsResolutions[0];
      const order = itsReplacements[0];
      if (itsReplacements.length !== 1 || order.merchant_id !== c.merchant_id || Number(order.id) !== Number(c.replacement_order_id))
        fail(`reshipped claim ${c.id} → replacement ${c.replacement_order_id}, but orders claim-${c.id} are [${itsReplacements.map((o) => o.id).join(', ')}]`);
      else if (itsResolutions.length !== 1 || r.kind !== 'reship' || Number(r.replacement_order_id) !== Number(order.id))
        fail(`reshipped claim ${c.id}: its resolution rows ${JSON.stringify(itsResolutions)} do not name its replacement order`);
      else if (
        sum(
          replacementItems.filter((i) => i.order_id === order.id),
          (i) => i.quantity,
        ) !== claimed
      )
        fail(`reshipped claim ${c.id}: its replacement order ${order.id} does not carry the ${claimed} claimed units`);
      else if (itsCredits.length || c.amount_cents !== null) fail(`reshipped claim ${c.id} was credited too`);
      else summary.verified.claimsReshipped++;
    } else if (itsCredits.length || itsResolutions.length || itsReplacements.length || c.replacement_order_id !== null || c.amount_cents !== null) {
      fail(
        `claim ${c.id} is ${c.status} but carries ${itsCredits.length} credits, ${itsResolutions.length} resolutions, ${itsReplacements.length} replacement orders (a half-made decision)`,
      );
    }
    // Received goods: only a claim the operator received (then resolved in that transaction, or left received).
    const received = c.status === 'received' || (c.return_required === 1 && (c.status === 'credited' || c.status === 'reshipped'));
    if (received !== (c.received_at !== null)) fail(`claim ${c.id} is ${c.status} (return required: ${c.return_required}) but received_at is ${c.received_at}`);
  }
  // Received goods back in stock exactly once: per order, the claim_return rows hold the received claims' units.
  const returned = await db
    .selectFrom('stock_ledger')
    .select(['order_id', 'delta'])
    .where('kind', '=', 'return')
    .where('reason', '=', 'claim_return')
    .execute();
  const orderIds = new Set([...rows.map((c) => c.order_id), ...returned.map((r) => Number(r.order_id))]);
  for (const orderId of orderIds) {
    const receivedClaims = rows.filter((c) => c.order_id === orderId && c.received_at !== null);
    const expected = sum(
      lines.filter((l) => receivedClaims.some((c) => c.id === l.claim_id)),
      (l) => l.quantity,
    );
    const back = sum(
      returned.filter((r) => Number(r.order_id) === orderId),
      (r) => r.delta,
    );
    if (back !== expected) fail(`order ${orderId}: its received claims hold ${expected} units but ${back} came back into stock`);
    else summary.verified.claimsReturned += receivedClaims.length;
  }
}

export function formatSummary(s: ChaosSummary): string {
  return [
    `chaos ${s.dialect} (seed ${s.seed}): ${s.serverKills} server kills, ${s.workerKills} worker kills, ${s.backupKills} backups killed with the server`,
    `  requests ${s.requests}, answered ${s.answered}, rejected (4xx) ${s.rejected}, still without an answer ${s.noResponse}`,
    `  acknowledged: ${s.acknowledged.orders} orders, ${s.acknowledged.refunds} refunds, ${s.acknowledged.ships} ships`,
    `  verified: ${s.verified.orders} orders and ${s.verified.refunds} refunds exactly once, ${s.verified.ships} ships, ${s.verified.replays} idempotent replays, ` +
      `${s.verified.retriedUnknown} unanswered requests retried, ${s.verified.stockRows} stock rows equal to the ledger, ${s.verified.refundsDecided} refunds decided (none pending)`,
    `  money: ${s.verified.charges} orders charged once, ${s.verified.credits} succeeded refunds credited once, stockist ledger verify passed ${s.verified.ledgerVerified} times (after every restart and at the end)`,
    `  claims: ${s.acknowledged.claims} opened, ${s.acknowledged.claimDecisions} decisions answered, ${s.claimDecisionsUnanswered} decisions without an answer (followed up); ` +
      `${s.verified.claims} in their last answered state, ${s.verified.claimsCredited} credited once, ${s.verified.claimsReshipped} reshipped in one linked order, ${s.verified.claimsReturned} returns back in stock once`,
    `  backups: ${s.verified.backups} archives passed backup verify, ${s.verified.partialsRefused} unfinished ones refused by verify and restore`,
    s.failures.length ? `  FAILURES (${s.failures.length}):\n${s.failures.map((f) => `    - ${f}`).join('\n')}` : '  no failures',
  ].join('\n');
}
