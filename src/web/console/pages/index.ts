import { accountPage } from './account.ts';
import type { ConsolePage } from './context.ts';
import { dashboardPage } from './dashboard.ts';
import { refundsPage } from './refunds.ts';
import { signInPage } from './sign-in.ts';
// Orders, merchants, webhooks (branch console-orders): imports below this line.
import { ordersPage } from './orders.ts';
import { merchantsPage } from './merchants.ts';
import { webhooksPage } from './webhooks.ts';

// Catalogue, stock, import, staff, audit (branch console-catalog): imports below this line.
import { auditPage } from './audit.ts';
import { catalogPage } from './catalog.ts';
import { importPage } from './import.ts';
import { staffPage } from './staff.ts';

/**
 * The console's page modules, registered in this order; the navigation bar lists their links in
 * the same order. Each group appends below its own marker, so parallel work touches separate lines.
 */
export const CONSOLE_PAGES: readonly ConsolePage[] = [
  signInPage,
  dashboardPage,
  refundsPage,
  // Orders, merchants, webhooks (branch console-orders): entries below this line.
  ordersPage,
  merchantsPage,
  webhooksPage,

  // Catalogue, stock, import, staff, audit (branch console-catalog): entries below this line.
  catalogPage,
  importPage,
  staffPage,
  auditPage,
  // Your account (Hardening III): entries below this line.
  accountPage,
];
