import type { Config } from '../config.ts';
import type { Handle } from '../store/db.ts';
import { countsPerDay, dashboardCounts, lowStockRows, refundWorkerCounts, troubledEndpoints } from '../store/dashboard.repository.ts';

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

/**
 * The console dashboard: orders and refunds of the last 30 days (totals and per day), refunds
 * waiting for review and how many are past REFUND_SLA_HOURS, low-stock rows (LOW_STOCK_THRESHOLD),
 * failing webhook endpoints and the refund worker's state. Every query is an indexed range or a
 * bounded list: none reads all orders.
 */
export async function dashboard(db: Handle, config: Pick<Config, 'refundSlaHours' | 'lowStockThreshold' | 'refundReview' | 'refundAutoDelayMs'>, now: number) {
  const today = Math.floor(now / DAY_MS);
  const firstDay = today - (CHART_DAYS - 1);
  const [counts, orders, refunds, low, endpoints, worker] = await Promise.all([
    dashboardCounts(db, now - 30 * DAY_MS, now - config.refundSlaHours * 3_600_000),
    countsPerDay(db, 'orders', firstDay * DAY_MS, (today + 1) * DAY_MS),
    countsPerDay(db, 'refunds', firstDay * DAY_MS, (today + 1) * DAY_MS),
    lowStockRows(db, config.lowStockThreshold, LIST_ROWS + 1),
    troubledEndpoints(db, LIST_ROWS + 1),
    refundWorkerCounts(db, now - config.refundAutoDelayMs, now),
  ]);
  const days = Array.from({ length: CHART_DAYS }, (_, i) => firstDay + i);
  const series: DailySeries = {
    days: days.map((d) => (d * DAY_MS) / 1000),
    orders: days.map((d) => orders.get(d) ?? 0),
    refunds: days.map((d) => refunds.get(d) ?? 0),
  };
  return {
    windowDays: 30,
    slaHours: config.refundSlaHours,
    ...counts,
    series,
    lowStock: { threshold: config.lowStockThreshold, rows: low.slice(0, LIST_ROWS), more: low.length > LIST_ROWS },
    failingEndpoints: { rows: endpoints.slice(0, LIST_ROWS), more: endpoints.length > LIST_ROWS },
    refundWorker: { mode: config.refundReview, ...worker },
  };
}
