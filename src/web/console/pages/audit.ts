import { AUDIT_ACTIONS } from '../../../domain/audit.ts';
import { AuditQuery } from '../../../schemas/console.ts';
import { auditCsv, auditLogPage } from '../../../services/audit.service.ts';
import { sendCsv } from '../../csv.ts';
import { presentConsoleAudit } from '../present.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import type { ConsolePage } from './context.ts';

const AUDIT_PAGE_SIZE = 50;

/** The audit log (owner only, audit:read): newest first, keyset paging, filters by actor, action and target. */
export const auditPage: ConsolePage = {
  nav: [{ href: `${CONSOLE_PREFIX}/audit`, label: 'Audit log', permission: 'audit:read' }],
  routes: async (app, { store, now, page }) => {
    app.get('/audit', { schema: { querystring: AuditQuery } }, async (request, reply) => {
      const filter = { actor: request.query.actor ?? '', action: request.query.action ?? '', target: request.query.target ?? '' };
      const entries = await auditLogPage(store.db, filter, request.query.cursor || null, AUDIT_PAGE_SIZE);
      return page(reply, 200, 'audit', presentConsoleAudit(filter, AUDIT_ACTIONS, entries));
    });

    // The filtered log as a CSV file: the page's filters (its query string), every matching row.
    app.get('/audit.csv', { schema: { querystring: AuditQuery } }, async (request, reply) => {
      const filter = { actor: request.query.actor ?? '', action: request.query.action ?? '', target: request.query.target ?? '' };
      return sendCsv(reply, await auditCsv(store.db, filter), now());
    });
  },
};
