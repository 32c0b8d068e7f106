import type { Handle } from '../store/db.ts';
import { backupStats } from '../store/backups.repository.ts';
import { ordersByStatus, pendingRefundsBefore, pendingRefundsIn, refundsByStatus, stockRowCount } from '../store/metrics.repository.ts';
import { pendingRefundStats } from '../store/refunds.repository.ts';

/**
 * What GET /metrics reports of the stored state (http/metrics.ts sets its gauges from these at
 * scrape time): counts only, each one aggregate query, across every merchant.
 */
export function storedStateReads(db: Handle, refundSlaHours: number) {
  return {
    ordersByStatus: () => ordersByStatus(db),
    refundsByStatus: () => refundsByStatus(db),
    /** Age of the oldest pending refund in seconds (0 when none). */
    oldestPendingRefundAgeSeconds: async (now = Date.now()) => {
      const s = await pendingRefundStats(db);
      return s.oldest === null ? 0 : Math.max(0, (now - Number(s.oldest)) / 1000);
    },
    /** Pending refunds older than REFUND_SLA_HOURS. */
    pendingRefundsOverSla: (now = Date.now()) => pendingRefundsBefore(db, now - refundSlaHours * 3600_000),
    pendingRefundsIn: (state: 'manual_review' | 'retrying') => pendingRefundsIn(db, state),
    stockRowCount: () => stockRowCount(db),
    backupStats: () => backupStats(db),
  };
}
