import { ClosedDayCounts, dashboard } from '../../../services/dashboard.service.ts';
import { can } from '../../../domain/staff.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentDashboard } from '../present-admin.ts';
import type { ConsolePage } from './context.ts';

/** The landing page: orders and refunds of the last days, the review queue and the open claims against their SLAs. */
export const dashboardPage: ConsolePage = {
  nav: [{ href: CONSOLE_PREFIX, label: 'Dashboard', permission: 'dashboard:read' }],
  routes: async (app, { config, store, now, page, user }) => {
    // Per app: the counts of days that are over, read once (see ClosedDayCounts).
    const closedDays = new ClosedDayCounts();
    app.get('', async (request, reply) => {
      const { role } = user(request);
      const stats = await dashboard(store.db, closedDays, config, now());
      // The links the navigation offers this role: the review queue, the claims queue, a low-stock SKU's product page.
      return page(
        reply,
        200,
        'dashboard',
        presentDashboard(stats, { reviewRefunds: can(role, 'refunds:read'), openClaims: can(role, 'claims:read'), openProducts: can(role, 'stock:adjust') }),
      );
    });
  },
};
