import type { Config } from '../config.ts';
import type { Handle } from '../store/db.ts';
import { dashboardCounts } from '../store/dashboard.repository.ts';

const DAY_MS = 86_400_000;

/** The console dashboard: orders and refunds of the last 30 days, refunds waiting for review and how many are past REFUND_SLA_HOURS. */
export async function dashboard(db: Handle, config: Pick<Config, 'refundSlaHours'>, now: number) {
  const counts = await dashboardCounts(db, now - 30 * DAY_MS, now - config.refundSlaHours * 3_600_000);
  return { windowDays: 30, slaHours: config.refundSlaHours, ...counts };
}
