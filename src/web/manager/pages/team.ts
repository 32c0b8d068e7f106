import { invitationUrl, passwordResetUrl } from '../../../domain/merchant-users.ts';
import { InviteForm, ManagerAuditQuery, ManagerCsrfForm, ManagerIdParams, RequireTwoFactorForm, RoleForm } from '../../../schemas/manager.ts';
import { merchantAudit, merchantAuditCsv } from '../../../services/audit.service.ts';
import { sendCsv } from '../../csv.ts';
import { inviteUser, revokeInvitation } from '../../../services/merchant-invitations.service.ts';
import { changeRole, createPasswordReset, removeMember, requireTwoFactor, team } from '../../../services/merchant-team.service.ts';
import { resetTwoFactor } from '../../../services/merchant-two-factor.service.ts';
import { presentManagerAudit } from '../present.ts';
import { presentTeam, type OneTimeLink as Link } from '../present-team.ts';
import type { ManagerPage } from './context.ts';

const TEAM = '/manager/team';

/** Page 6, Team (admins): invite, change role, remove, require two-factor, reset a member's two-factor; and the merchant's audit log. */
export const teamPage: ManagerPage = {
  nav: [
    { href: TEAM, label: 'Team', permission: 'team:manage' },
    { href: '/manager/audit', label: 'Audit log', permission: 'audit:read' },
  ],
  routes: async (app, { store, now, page, forms, origin, user, actor, merchant }) => {
    const { db } = store;
    const show = async (request: Parameters<typeof user>[0], reply: Parameters<typeof page>[0], links: { invited?: Link; reset?: Link } = {}) => {
      return page(reply, 200, 'team', presentTeam(await team(merchant(request), now()), user(request), links));
    };

    app.get('/team', async (request, reply) => show(request, reply, (await forms.take<{ invited?: Link; reset?: Link }>(request, 'team-link')) ?? {}));

    /** A one-time link: kept for the team page, shown there once (POST → 303 → GET). */
    const shownOnce = async (request: Parameters<typeof user>[0], reply: Parameters<typeof page>[0], links: { invited?: Link; reset?: Link }) => {
      await forms.flash(request, 'team-link', links);
      return reply.redirect(TEAM, 303);
    };

    app.post('/team/invitations', { schema: { body: InviteForm } }, async (request, reply) => {
      const invitation = await inviteUser(merchant(request), actor(request), { email: request.body.email, role: request.body.role }, now());
      return shownOnce(request, reply, { invited: { email: invitation.email, url: invitationUrl(origin(request), invitation.token) } });
    });

    app.post('/team/invitations/:id/revoke', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      await revokeInvitation(merchant(request), actor(request), Number(request.params.id), now());
      await forms.flash(request, 'notice', { text: 'Invitation revoked: its link no longer works.' });
      return reply.redirect(TEAM, 303);
    });

    app.post('/team/two-factor', { schema: { body: RequireTwoFactorForm } }, async (request, reply) => {
      await requireTwoFactor(db, user(request), request.body.required === 'on', request.id, now());
      await forms.flash(request, 'notice', {
        text: request.body.required === 'on' ? 'Two-factor sign-in is now required of every user.' : 'Two-factor sign-in is no longer required.',
      });
      return reply.redirect(TEAM, 303);
    });

    app.post('/team/:id/role', { schema: { params: ManagerIdParams, body: RoleForm } }, async (request, reply) => {
      await changeRole(merchant(request), user(request), Number(request.params.id), request.body.role, request.id, now());
      await forms.flash(request, 'notice', { text: `Role changed to ${request.body.role}.` });
      return reply.redirect(TEAM, 303);
    });

    app.post('/team/:id/remove', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      await removeMember(merchant(request), user(request), Number(request.params.id), request.id, now());
      await forms.flash(request, 'notice', { text: 'User removed: their sessions are signed out.' });
      return reply.redirect(TEAM, 303);
    });

    // A one-time link that sets the member's password (Hardening III, 5): shown once, to hand on.
    app.post('/team/:id/reset-password', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      const reset = await createPasswordReset(merchant(request), actor(request), { userId: Number(request.params.id) }, now());
      return shownOnce(request, reply, { reset: { email: reset.email, url: passwordResetUrl(origin(request), reset.token) } });
    });

    // A member who lost their authenticator and recovery codes (issue 29, 13): two-factor off, sessions ended.
    // Asked first on the page (it ends the member's sessions); the Team page then says it was done.
    app.post('/team/:id/reset-two-factor', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      const done = await resetTwoFactor(merchant(request), actor(request), { userId: Number(request.params.id) }, now());
      await forms.flash(request, 'notice', {
        text: `Two-factor sign-in of ${done.email} is off, and their sessions have ended (${done.sessionsEnded}). They sign in with their password and turn it on again.`,
      });
      return reply.redirect(TEAM, 303);
    });

    app.get('/audit', { schema: { querystring: ManagerAuditQuery } }, async (request, reply) => {
      const before = request.query.before ? Number(request.query.before) : null;
      const rows = await merchantAudit(merchant(request), before, 50);
      return page(reply, 200, 'audit', presentManagerAudit(rows));
    });

    // The merchant's whole audit log as a CSV file.
    app.get('/audit.csv', async (request, reply) => sendCsv(reply, merchantAuditCsv(merchant(request)), now()));
  },
};
