import type { ManagerPermission } from '../../domain/merchant-users.ts';
import { routeLookup, type WebRoute } from '../foundation.ts';

/** The business manager's base path (on the public port, beside the merchant API). */
export const MANAGER_PREFIX = '/manager';

export const MANAGER_SIGN_IN_PATH = `${MANAGER_PREFIX}/sign-in`;

/** The session cookie's name (`__Host-` prefixed under HTTPS). */
export const MANAGER_COOKIE = 'stockist_manager';

/**
 * Gate words beside the role permissions: `pending` — a session whose password was right and whose
 * TOTP code is still due (the code page); `session` — any session (sign-out).
 */
export type ManagerGate = ManagerPermission | 'pending' | 'session';

/**
 * Every business manager route and what it needs (roles → permissions: src/domain/merchant-users.ts).
 * The plugin refuses to register a route not listed here and enforces the listed permission on
 * every request. Every route that takes an id is listed in test/http/manager-tenancy.test.ts too.
 * `once`: a form not idempotent by nature, sent with a one-time key (web/foundation.ts). `body`: a
 * form with files (`multipart`) or a script's raw upload (`file`), besides urlencoded forms.
 */
export const MANAGER_ROUTES: readonly WebRoute<ManagerGate>[] = [
  // Signing in (with the second factor), invitations and reset links, the assets: no session, or a pending one.
  { method: 'GET', path: '/sign-in', permission: 'public' },
  { method: 'POST', path: '/sign-in', permission: 'public' },
  { method: 'GET', path: '/invitations/:token', permission: 'public' },
  { method: 'POST', path: '/invitations/:token', permission: 'public' },
  { method: 'GET', path: '/password-reset/:token', permission: 'public' },
  { method: 'POST', path: '/password-reset/:token', permission: 'public' },
  { method: 'GET', path: '/assets/:file', permission: 'public' },
  { method: 'GET', path: '/sign-in/code', permission: 'pending' },
  { method: 'POST', path: '/sign-in/code', permission: 'pending' },
  { method: 'POST', path: '/sign-out', permission: 'session' },

  // Your account and your two-factor sign-in.
  { method: 'GET', path: '/two-factor', permission: 'account:self' },
  { method: 'POST', path: '/two-factor/enable', permission: 'account:self', once: true },
  { method: 'POST', path: '/two-factor/disable', permission: 'account:self' },
  { method: 'POST', path: '/two-factor/recovery-codes', permission: 'account:self', once: true },
  { method: 'GET', path: '/account', permission: 'account:self' },
  { method: 'POST', path: '/account/password', permission: 'account:self' },
  { method: 'POST', path: '/account/sign-out-everywhere', permission: 'account:self' },

  // Get started.
  { method: 'GET', path: '', permission: 'overview:read' },
  { method: 'POST', path: '/get-started/token', permission: 'credentials:write', once: true },

  // API credentials: OAuth clients and personal tokens.
  { method: 'GET', path: '/credentials', permission: 'credentials:read' },
  { method: 'POST', path: '/credentials/clients', permission: 'credentials:write', once: true },
  { method: 'POST', path: '/credentials/clients/:id/rotate', permission: 'credentials:write', once: true },
  { method: 'POST', path: '/credentials/clients/:id/revoke', permission: 'credentials:write' },
  { method: 'POST', path: '/credentials/tokens', permission: 'credentials:write', once: true },
  { method: 'POST', path: '/credentials/tokens/:id/revoke', permission: 'credentials:write' },

  // Webhook endpoints and deliveries.
  { method: 'GET', path: '/webhooks', permission: 'webhooks:read' },
  { method: 'POST', path: '/webhooks', permission: 'webhooks:write', once: true },
  { method: 'GET', path: '/webhooks/:id', permission: 'webhooks:read' },
  { method: 'POST', path: '/webhooks/:id', permission: 'webhooks:write' },
  { method: 'GET', path: '/webhooks/:id/deliveries', permission: 'webhooks:read' },
  { method: 'POST', path: '/webhooks/:id/rotate-secret', permission: 'webhooks:write', once: true },
  { method: 'POST', path: '/webhooks/:id/test', permission: 'webhooks:write', once: true },
  { method: 'POST', path: '/webhooks/:id/delete', permission: 'webhooks:write' },
  { method: 'POST', path: '/webhooks/:id/deliveries/:deliveryId/retry', permission: 'webhooks:write' },

  // Orders (read-only).
  { method: 'GET', path: '/orders', permission: 'orders:read' },
  { method: 'GET', path: '/orders/:id', permission: 'orders:read' },
  { method: 'GET', path: '/orders.csv', permission: 'orders:read' },

  // Claims after shipment: opened from a shipped split order, followed in the list and on the claim's page.
  { method: 'GET', path: '/claims', permission: 'claims:read' },
  { method: 'GET', path: '/claims.csv', permission: 'claims:read' },
  { method: 'GET', path: '/claims/:claimNo', permission: 'claims:read' },
  { method: 'GET', path: '/claims/files/:fileId', permission: 'claims:read' },
  { method: 'POST', path: '/claims/files', permission: 'claims:write', body: 'file' },
  { method: 'POST', path: '/claims/:claimNo/return', permission: 'claims:write' },
  { method: 'POST', path: '/claims/:claimNo/cancel', permission: 'claims:write' },
  { method: 'GET', path: '/split-orders/:id/claim', permission: 'claims:write' },
  { method: 'POST', path: '/split-orders/:id/claim', permission: 'claims:write', once: true, body: 'multipart' },

  // The team: members, invitations, the merchant's two-factor rule.
  { method: 'GET', path: '/team', permission: 'team:manage' },
  { method: 'POST', path: '/team/invitations', permission: 'team:manage', once: true },
  { method: 'POST', path: '/team/invitations/:id/revoke', permission: 'team:manage' },
  { method: 'POST', path: '/team/two-factor', permission: 'team:manage' },
  { method: 'POST', path: '/team/:id/role', permission: 'team:manage' },
  { method: 'POST', path: '/team/:id/remove', permission: 'team:manage' },
  { method: 'POST', path: '/team/:id/reset-password', permission: 'team:manage', once: true },
  { method: 'POST', path: '/team/:id/reset-two-factor', permission: 'team:manage' },

  // The audit log.
  { method: 'GET', path: '/audit', permission: 'audit:read' },
  { method: 'GET', path: '/audit.csv', permission: 'audit:read' },

  // Usage, balance and statements.
  { method: 'GET', path: '/usage', permission: 'usage:read' },
  { method: 'GET', path: '/balance', permission: 'balance:read' },
  { method: 'GET', path: '/balance/statement', permission: 'balance:read' },
  { method: 'GET', path: '/balance/transactions.csv', permission: 'balance:read' },
];

export const managerRouteFor = routeLookup(MANAGER_PREFIX, MANAGER_ROUTES);
