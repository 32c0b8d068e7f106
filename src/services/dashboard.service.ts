import { supplierMoney } from '../store/ledger.repository.ts';
import type { Config } from '../config.ts';
import type { Handle } from '../store/db.ts';
import { merchantNames } from '../store/merchants.repository.ts';
import { openClaimCounts } from '../store/claims.repository.ts';
import { allMerchants } from '../store/tenancy.ts';
import { countsPerDay, lowStockRows, refundWorkerCounts, reviewCounts, troubledEndpoints } from '../store/dashboard.repository.ts';

const DAY_MS = 86_400_000;
/** Days in the dashboard's chart, today (UTC) included. */
export const CHART_DAYS = 30;
/** Rows of each dashboard list; the page says when there are more. */
const LIST_ROWS = 20;

/** One count per UTC day, oldest first, zero-filled: what the chart draws. */
export interface DailySeries {
  /** Midnight UTC of each day, epoch seconds (uPlot's x axis). */
  days: number[];
  orders: number[];
  refunds: number[];
}

/** A day is closed (its count final) this long after its UTC midnight: a transaction stamped 23:59:59 has committed by then. */
const CLOSE_AFTER_MS = 60_000;

/**
 * Orders and refunds created per UTC day, for the days that are over. An order or refund keeps
 * the day it was created on and none is deleted, so a closed day's count never changes: it is read
 * once per process and kept, and each dashboard reads only the days still open (today) from the
 * database. At 1M orders in 30 days that is the difference between reading every order's index
 * entry twice per page view and reading today's (docs/performance.md, "Console pages").
 */
export class ClosedDayCounts {
  private readonly counts = new Map<string, number>();

  /** Counts per day of [firstDay, lastDay] (day numbers since 1970-01-01 UTC), zero-filled. */
  async perDay(db: Handle, table: 'orders' | 'refunds', firstDay: number, lastDay: number, now: number): Promise<Map<number, number>> {
    const openFrom = Math.max(firstDay, Math.floor((now - CLOSE_AFTER_MS) / DAY_MS));
    let missingFrom: number | null = null;
    for (let day = firstDay; day < openFrom; day++) if (!this.counts.has(`${table} ${day}`)) missingFrom ??= day;
    const readFrom = missingFrom ?? openFrom;
    const read = await countsPerDay(db, table, readFrom * DAY_MS, (lastDay + 1) * DAY_MS);
    for (let day = readFrom; day < openFrom; day++) this.counts.set(`${table} ${day}`, read.get(day) ?? 0);
    // Days that left the window are forgotten: the map holds at most the window's days per table.
    for (const key of this.counts.keys()) if (Number(key.split(' ')[1]) < firstDay) this.counts.delete(key);
    const out = new Map<number, number>();
    for (let day = firstDay; day <= lastDay; day++) out.set(day, day < openFrom ? this.counts.get(`${table} ${day}`)! : (read.get(day) ?? 0));
    return out;
  }
}

/**
 * The console dashboard: orders and refunds of the last 30 days (totals and per day), refunds
 * waiting for review and how many are past REFUND_SLA_HOURS, low-stock rows (LOW_STOCK_THRESHOLD),
 * failing webhook endpoints and the refund worker's state. Every query is an indexed range or a
 * bounded list: none reads all orders.
 */
export async function dashboard(
  db: Handle,
  closedDays: ClosedDayCounts,
  config: Pick<Config, 'refundSlaHours' | 'claimSlaHours' | 'lowStockThreshold' | 'refundReview' | 'refundAutoDelayMs' | 'env' | 'supplierCurrency'>,
  now: number,
) {
  const today = Math.floor(now / DAY_MS);
  const firstDay = today - (CHART_DAYS - 1);
  const [counts, orders, refunds, low, endpoints, worker, money, claims] = await Promise.all([
    reviewCounts(db, now - config.refundSlaHours * 3_600_000),
    closedDays.perDay(db, 'orders', firstDay, today, now),
    closedDays.perDay(db, 'refunds', firstDay, today, now),
    lowStockRows(db, config.lowStockThreshold, LIST_ROWS + 1),
    troubledEndpoints(db, LIST_ROWS + 1),
    refundWorkerCounts(db, now - config.refundAutoDelayMs, now),
    supplierMoney(db, config.env),
    openClaimCounts(allMerchants(db), now - config.claimSlaHours * 3_600_000),
  ]);
  const days = Array.from({ length: CHART_DAYS }, (_, i) => firstDay + i);
  const series: DailySeries = {
    days: days.map((d) => (d * DAY_MS) / 1000),
    orders: days.map((d) => orders.get(d) ?? 0),
    refunds: days.map((d) => refunds.get(d) ?? 0),
  };
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const failing = endpoints.slice(0, LIST_ROWS);
  const names = await merchantNames(
    db,
    failing.map((e) => e.merchantId),
  );
  return {
    windowDays: CHART_DAYS,
    // The totals are the chart's: the 30 UTC days shown, today included.
    orders: sum(series.orders),
    refunds: sum(series.refunds),
    slaHours: config.refundSlaHours,
    ...counts,
    series,
    lowStock: { threshold: config.lowStockThreshold, rows: low.slice(0, LIST_ROWS), more: low.length > LIST_ROWS },
    failingEndpoints: { rows: failing.map((e) => ({ ...e, merchantName: names.get(e.merchantId) ?? '' })), more: endpoints.length > LIST_ROWS },
    refundWorker: { mode: config.refundReview, ...worker },
    // SPEC §18: claims open, and open past CLAIM_SLA_HOURS.
    claims: { ...claims, slaHours: config.claimSlaHours },
    // SPEC §15, this server's environment, in minor units (the console's presenter writes them as money).
    money: {
      environment: config.env,
      currency: config.supplierCurrency,
      receivedCents: money.receivedCents,
      owedCents: money.owedCents,
      heldCents: money.heldCents,
    },
  };
}
