import { accountPage } from './account.ts';
import type { ManagerPage } from './context.ts';
import { credentialsPage } from './credentials.ts';
import { ordersPage } from './orders.ts';
import { overviewPage } from './overview.ts';
import { teamPage } from './team.ts';
import { webhooksPage } from './webhooks.ts';
// Usage (branch usage-counters): imports below this line.
import { usagePage } from './usage.ts';
import { balancePage } from './balance.ts';

/**
 * The business manager's page modules, registered in this order; the navigation bar lists their
 * links in the same order (each link shown only to the roles that may open it).
 */
export const MANAGER_PAGES: readonly ManagerPage[] = [
  accountPage,
  overviewPage,
  credentialsPage,
  webhooksPage,
  ordersPage,
  teamPage,
  // Usage (branch usage-counters): entries below this line.
  usagePage,
  balancePage,
];
