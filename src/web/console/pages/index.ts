import { accountPage } from './account.ts';
import { auditPage } from './audit.ts';
import { backupsPage } from './backups.ts';
import { booksPage } from './books.ts';
import { claimsPage } from './claims.ts';
import { catalogPage } from './catalog.ts';
import { catalogEditPage } from './catalog-edit.ts';
import type { ConsolePage } from './context.ts';
import { dashboardPage } from './dashboard.ts';
import { importPage } from './import.ts';
import { merchantsPage } from './merchants.ts';
import { ordersPage } from './orders.ts';
import { refundsPage } from './refunds.ts';
import { signInPage } from './sign-in.ts';
import { staffPage } from './staff.ts';
import { webhooksPage } from './webhooks.ts';

/**
 * The console's page modules, registered in this order; the navigation bar lists their links in
 * the same order: the day's work first (dashboard, refund review, claims, orders), then the merchants, the
 * supplier's books and the merchants' webhooks, the catalogue and its import, the staff, the audit log and the backups; your
 * account last.
 */
export const CONSOLE_PAGES: readonly ConsolePage[] = [
  signInPage,
  dashboardPage,
  refundsPage,
  claimsPage,
  ordersPage,
  merchantsPage,
  booksPage,
  webhooksPage,
  catalogPage,
  catalogEditPage,
  importPage,
  staffPage,
  auditPage,
  backupsPage,
  accountPage,
];
