import { merchantBucketUse } from '../../../http/rate-limit.ts';
import { merchantUsage, rateLimitSubject } from '../../../services/usage.service.ts';
import { presentUsage } from '../present-integrations.ts';
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
      return page(reply, 200, 'usage', presentUsage(usage, budget, config.env));
    });
  },
};
