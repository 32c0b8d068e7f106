import type { Permission } from '../../domain/staff.ts';
import { routeLookup, type WebRoute } from '../foundation.ts';

/** The console's base path (on the admin surface: ADMIN_PORT when set). */
export const CONSOLE_PREFIX = '/console';

/** Where a request without a session is sent. */
export const SIGN_IN_PATH = `${CONSOLE_PREFIX}/sign-in`;

/** The session cookie's name (`__Host-` prefixed under HTTPS: foundation.ts, cookieName). */
export const CONSOLE_COOKIE = 'stockist_console';

/**
 * `permission`: what the signed-in staff member's role must allow; `public`: no session needed
 * (sign-in, assets). `once`: a form not idempotent by nature, sent with a one-time key (foundation.ts).
 */
type ConsoleRoute = WebRoute<Permission>;

/**
 * Every console route and the permission it needs (roles → permissions: src/domain/staff.ts). The
 * console plugin refuses to register a route that is not listed here and enforces the listed
 * permission on every request, so a page cannot be added without deciding who may use it.
 */
export const CONSOLE_ROUTES: readonly ConsoleRoute[] = [
  // Signing in, the session, the assets (no session needed where public).
  { method: 'GET', path: '/sign-in', permission: 'public' },
  { method: 'POST', path: '/sign-in', permission: 'public' },
  { method: 'GET', path: '/assets/:file', permission: 'public' },
  { method: 'POST', path: '/sign-out', permission: 'dashboard:read' },
  { method: 'GET', path: '/password-reset/:token', permission: 'public' },
  { method: 'POST', path: '/password-reset/:token', permission: 'public' },

  // The dashboard.
  { method: 'GET', path: '', permission: 'dashboard:read' },

  // Your account: every staff member, for their own account only.
  { method: 'GET', path: '/account', permission: 'dashboard:read' },
  { method: 'POST', path: '/account/password', permission: 'dashboard:read' },
  { method: 'POST', path: '/account/sign-out-everywhere', permission: 'dashboard:read' },

  // Refunds: the review queue.
  { method: 'GET', path: '/refunds', permission: 'refunds:read' },
  { method: 'POST', path: '/refunds/:refundNo/approve', permission: 'refunds:review' },
  { method: 'POST', path: '/refunds/:refundNo/reject', permission: 'refunds:review' },
  { method: 'GET', path: '/refunds.csv', permission: 'refunds:read' },
  { method: 'GET', path: '/refunds/all', permission: 'refunds:read' },
  { method: 'GET', path: '/refunds/all.csv', permission: 'refunds:read' },

  // Claims after shipment (SPEC §18): the queue, a claim's page and its evidence, the decisions.
  { method: 'GET', path: '/claims', permission: 'claims:read' },
  { method: 'GET', path: '/claims.csv', permission: 'claims:read' },
  { method: 'GET', path: '/claims/files/:fileId', permission: 'claims:read' },
  { method: 'GET', path: '/claims/:claimNo', permission: 'claims:read' },
  { method: 'POST', path: '/claims/:claimNo/approve', permission: 'claims:decide' },
  { method: 'POST', path: '/claims/:claimNo/require-return', permission: 'claims:decide' },
  { method: 'POST', path: '/claims/:claimNo/reject', permission: 'claims:decide' },
  { method: 'POST', path: '/claims/:claimNo/resolution', permission: 'claims:decide' },
  { method: 'POST', path: '/claims/:claimNo/received', permission: 'claims:receive' },

  // Orders and their split orders.
  { method: 'GET', path: '/orders', permission: 'orders:read' },
  { method: 'GET', path: '/orders/:id', permission: 'orders:read' },
  { method: 'POST', path: '/orders/:id/note', permission: 'orders:note' },
  { method: 'POST', path: '/splits/:id/ship', permission: 'orders:fulfil' },
  { method: 'POST', path: '/splits/:id/deliver', permission: 'orders:fulfil' },
  { method: 'GET', path: '/splits/:id/cancel', permission: 'orders:cancel' },
  { method: 'POST', path: '/splits/:id/cancel', permission: 'orders:cancel' },
  { method: 'GET', path: '/orders.csv', permission: 'orders:read' },

  // Merchants: the list, the page, its tokens, business manager users and invitations, its account.
  { method: 'GET', path: '/merchants', permission: 'merchants:read' },
  { method: 'POST', path: '/merchants', permission: 'merchants:write', once: true },
  { method: 'GET', path: '/merchants/:id', permission: 'merchants:read' },
  { method: 'POST', path: '/merchants/:id/disable', permission: 'merchants:write' },
  { method: 'POST', path: '/merchants/:id/enable', permission: 'merchants:write' },
  { method: 'POST', path: '/merchants/:id/tokens', permission: 'merchants:write', once: true },
  { method: 'POST', path: '/merchants/:id/tokens/:tokenId/revoke', permission: 'merchants:write' },
  { method: 'POST', path: '/merchants/:id/users', permission: 'merchants:write', once: true },
  { method: 'POST', path: '/merchants/:id/account/top-ups', permission: 'merchants:write', once: true },
  { method: 'POST', path: '/merchants/:id/account/adjustments', permission: 'merchants:write', once: true },
  { method: 'POST', path: '/merchants/:id/account', permission: 'merchants:write' },
  { method: 'GET', path: '/merchants/:id/transactions', permission: 'merchants:read' },
  { method: 'POST', path: '/merchants/:id/users/:userId/remove', permission: 'merchants:write' },
  { method: 'POST', path: '/merchants/:id/users/:userId/reset-two-factor', permission: 'merchants:write' },
  { method: 'POST', path: '/merchants/:id/invitations/:invitationId/cancel', permission: 'merchants:write' },
  { method: 'POST', path: '/merchants/:id/invitations/:invitationId/resend', permission: 'merchants:write', once: true },
  { method: 'GET', path: '/merchants/:id/transactions.csv', permission: 'merchants:read' },

  // Webhook endpoints and deliveries.
  { method: 'GET', path: '/webhooks', permission: 'webhooks:manage' },
  { method: 'GET', path: '/webhooks/:id', permission: 'webhooks:manage' },
  { method: 'POST', path: '/webhooks/:id/disable', permission: 'webhooks:manage' },
  { method: 'POST', path: '/webhooks/:id/enable', permission: 'webhooks:manage' },
  { method: 'POST', path: '/webhooks/:id/deliveries/:deliveryId/retry', permission: 'webhooks:manage' },

  // Catalogue and stock; import.
  { method: 'GET', path: '/products', permission: 'stock:adjust' },
  { method: 'GET', path: '/products/:sku', permission: 'stock:adjust' },
  { method: 'POST', path: '/products/:sku/adjust', permission: 'stock:adjust', once: true },
  { method: 'GET', path: '/import', permission: 'import:run' },
  { method: 'POST', path: '/import', permission: 'import:run' },
  { method: 'GET', path: '/import/:jobId', permission: 'import:run' },
  { method: 'GET', path: '/products.csv', permission: 'stock:adjust' },
  { method: 'GET', path: '/import/template.csv', permission: 'import:run' },
  { method: 'POST', path: '/import/preview', permission: 'import:run' },
  { method: 'GET', path: '/import/preview/:previewId', permission: 'import:run' },
  { method: 'POST', path: '/import/preview/:previewId/apply', permission: 'import:run' },

  // Catalogue editing: products, warehouses and logistics channels (create and edit).
  { method: 'GET', path: '/new-product', permission: 'catalog:write' },
  { method: 'POST', path: '/new-product', permission: 'catalog:write' },
  { method: 'GET', path: '/products/:sku/edit', permission: 'catalog:write' },
  { method: 'POST', path: '/products/:sku/edit', permission: 'catalog:write' },
  { method: 'GET', path: '/warehouses', permission: 'catalog:write' },
  { method: 'GET', path: '/warehouses/new', permission: 'catalog:write' },
  { method: 'POST', path: '/warehouses/new', permission: 'catalog:write' },
  { method: 'GET', path: '/warehouses/:code/edit', permission: 'catalog:write' },
  { method: 'POST', path: '/warehouses/:code/edit', permission: 'catalog:write' },
  { method: 'GET', path: '/channels', permission: 'catalog:write' },
  { method: 'GET', path: '/channels/new', permission: 'catalog:write' },
  { method: 'POST', path: '/channels/new', permission: 'catalog:write' },
  { method: 'GET', path: '/channels/:code/edit', permission: 'catalog:write' },
  { method: 'POST', path: '/channels/:code/edit', permission: 'catalog:write' },

  // Staff.
  { method: 'GET', path: '/staff', permission: 'staff:manage' },
  { method: 'POST', path: '/staff', permission: 'staff:manage', once: true },
  { method: 'POST', path: '/staff/:staffId/disable', permission: 'staff:manage' },
  { method: 'POST', path: '/staff/:staffId/enable', permission: 'staff:manage' },
  { method: 'POST', path: '/staff/:staffId/reset-password', permission: 'staff:manage' },
  { method: 'POST', path: '/staff/:staffId/role', permission: 'staff:manage' },

  // Backups (owner only: an archive holds every merchant's data); the name must be one the listing holds.
  { method: 'GET', path: '/backups', permission: 'backups:manage' },
  { method: 'POST', path: '/backups', permission: 'backups:manage', once: true },
  { method: 'GET', path: '/backups/:name', permission: 'backups:manage' },

  // The supplier's books: its accounts, the journal export, bank statement matching (reads only; owner).
  { method: 'GET', path: '/books', permission: 'ledger:read' },
  { method: 'GET', path: '/books/journal.csv', permission: 'ledger:read' },
  { method: 'POST', path: '/books/bank-match', permission: 'ledger:read' },

  // The audit log.
  { method: 'GET', path: '/audit', permission: 'audit:read' },
  { method: 'GET', path: '/audit.csv', permission: 'audit:read' },
];

/** The table entry of a registered route (`url` with the prefix); HEAD answers to the GET's entry. */
export const consoleRouteFor = routeLookup(CONSOLE_PREFIX, CONSOLE_ROUTES);
