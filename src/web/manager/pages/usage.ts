import { USAGE_DAYS } from '../../../domain/usage.ts';
import { merchantBucketUse } from '../../../http/rate-limit.ts';
import { merchantUsage, rateLimitSubject } from '../../../services/usage.service.ts';
import type { ManagerPage } from './context.ts';

/**
 * Page 5, Usage: requests per day by status class for 30 days (a uPlot chart drawn by
 * assets/usage-chart.js from a data attribute — the CSP forbids inline script — and the same
 * numbers in a table), errors by code, the rate-limit budget now, and the newest 4xx answers.
 * From the usage counters (docs/decisions.md "Usage counters"); this process's unflushed counts
 * are flushed first, so a single-process installation shows every request up to now.
 */
export const usagePage: ManagerPage = {
  nav: [{ href: '/manager/usage', label: 'Usage', permission: 'usage:read' }],
  routes: async (app, { config, buckets, now, page, merchant }) => {
    app.get('/usage', async (request, reply) => {
      const scope = merchant(request);
      await request.server.usageRecorder?.flush();
      const subject = await rateLimitSubject(scope);
      const [usage, budget] = await Promise.all([merchantUsage(scope, config.env, now()), subject ? merchantBucketUse(buckets, config, subject) : null]);
      const chart = {
        days: usage.days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000),
        ok: usage.days.map((d) => d.byClass[2]),
        redirect: usage.days.map((d) => d.byClass[3]),
        clientError: usage.days.map((d) => d.byClass[4]),
        serverError: usage.days.map((d) => d.byClass[5]),
      };
      const totals = { 2: 0, 3: 0, 4: 0, 5: 0 };
      for (const d of usage.days) for (const c of [2, 3, 4, 5] as const) totals[c] += d.byClass[c];
      return page(reply, 200, 'usage', { title: 'Usage', windowDays: USAGE_DAYS, usage, chart, totals, budget });
    });
  },
};
