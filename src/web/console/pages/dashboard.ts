import { ClosedDayCounts, dashboard } from '../../../services/dashboard.service.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import type { ConsolePage } from './context.ts';

/** The landing page: orders and refunds of the last days, the review queue against its SLA. */
export const dashboardPage: ConsolePage = {
  nav: [{ href: CONSOLE_PREFIX, label: 'Dashboard', permission: 'dashboard:read' }],
  routes: async (app, { config, store, now, page }) => {
    // Per app: the counts of days that are over, read once (see ClosedDayCounts).
    const closedDays = new ClosedDayCounts();
    app.get('', async (_request, reply) => page(reply, 200, 'dashboard', { title: 'Dashboard', stats: await dashboard(store.db, closedDays, config, now()) }));
  },
};
