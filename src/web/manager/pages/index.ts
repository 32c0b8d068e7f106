import { accountPage } from './account.ts';
import { balancePage } from './balance.ts';
import { claimsPage } from './claims.ts';
import type { ManagerPage } from './context.ts';
import { credentialsPage } from './credentials.ts';
import { ordersPage } from './orders.ts';
import { overviewPage } from './overview.ts';
import { teamPage } from './team.ts';
import { usagePage } from './usage.ts';
import { webhooksPage } from './webhooks.ts';

/**
 * The business manager's page modules, registered in this order; the navigation bar lists their
 * links in the same order (each link shown only to the roles that may open it): getting started
 * and the integration (credentials, webhooks), the orders and their claims, the team, then usage and money.
 */
export const MANAGER_PAGES: readonly ManagerPage[] = [
  accountPage,
  overviewPage,
  credentialsPage,
  webhooksPage,
  ordersPage,
  claimsPage,
  teamPage,
  usagePage,
  balancePage,
];
