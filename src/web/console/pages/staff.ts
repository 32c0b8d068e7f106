import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, conflictState, notFound } from '../../../domain/errors.ts';
import { httpStatus } from '../../../http/errors.ts';
import { FormAlreadySent } from '../../../domain/form-keys.ts';
import { STAFF_ROLES, staffPasswordResetUrl } from '../../../domain/staff.ts';
import { StaffCreateForm, StaffParams, StaffRoleForm, CsrfForm } from '../../../schemas/console.ts';
import { generatePassword } from '../../../services/accounts.service.ts';
import { createStaff, createStaffPasswordReset, disableStaff, enableStaff, listStaff, setStaffRole } from '../../../services/staff.service.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentStaff } from '../present-admin.ts';
import type { ConsolePage } from './context.ts';

/** A one-time password as the list shows it once. */
interface StaffSecret {
  email: string;
  password: string;
  why: 'created';
}

/** A password reset link as the list shows it once: the staff member chooses the password on the page it opens. */
interface StaffReset {
  email: string;
  url: string;
  expiresAt: number;
}

/**
 * Staff (owner only, staff:manage): the list, create (the one-time password is shown once, on the
 * page the form's 303 leads to, never stored in clear or shown again), disable, enable, a password
 * reset link (shown once the same way; the staff member chooses the new password on the page it
 * opens, account.ts),
 * change role. Nobody can disable their own account or change their own role here (a slip would
 * sign you out or take the page away); the service itself refuses (409) to disable or demote the
 * last active owner, here and on the CLI, so the console always has someone who can manage staff.
 */
export const staffPage: ConsolePage = {
  nav: [{ href: `${CONSOLE_PREFIX}/staff`, label: 'Staff', permission: 'staff:manage' }],
  routes: async (app, { store, now, page, forms, user, actor }) => {
    const { db } = store;

    const render = async (reply: FastifyReply, status: number, shown: Omit<Parameters<typeof presentStaff>[1], 'me' | 'roles'> = {}) =>
      page(reply, status, 'staff', presentStaff(await listStaff(db), { me: user(reply.request).staffId, roles: STAFF_ROLES, ...shown }));

    /** The account a URL names; a number that names none is a 404 page. */
    const account = async (staffId: string) => {
      const row = (await listStaff(db)).find((s) => String(s.id) === staffId);
      if (!row) throw notFound('staff account');
      return row;
    };
    const notSelf = (request: FastifyRequest, staffId: number, what: string) => {
      if (staffId === user(request).staffId) throw conflictState(`you cannot ${what} your own account here`);
    };
    /**
     * A change answers 303 to the list, which shows its message (or new password) once; a refused
     * one comes back as the page with the reason, at the refusal's status: nothing was written.
     */
    const orRefusal = async (
      reply: FastifyReply,
      extra: { form?: { email: string; role: string } },
      change: () => Promise<{ done?: string; secret?: StaffSecret; reset?: StaffReset }>,
    ) => {
      try {
        const { done, secret, reset } = await change();
        if (done) await forms.flash(reply.request, 'notice', { text: done });
        if (secret) await forms.flash(reply.request, 'staff-secret', secret);
        if (reset) await forms.flash(reply.request, 'staff-reset', reset);
        return reply.redirect(`${CONSOLE_PREFIX}/staff`, 303);
      } catch (error) {
        if (!(error instanceof AppError) || error.kind === 'not_found' || error instanceof FormAlreadySent) throw error;
        const why = error.errors?.length ? error.errors.map((e) => `${e.field} ${e.message}`).join('; ') : error.message;
        return render(reply, httpStatus(error), { ...extra, error: why });
      }
    };

    app.get('/staff', async (request, reply) =>
      render(reply, 200, {
        secret: await forms.take<StaffSecret>(request, 'staff-secret'),
        reset: await forms.take<StaffReset>(request, 'staff-reset'),
      }),
    );

    app.post('/staff', { schema: { body: StaffCreateForm } }, async (request, reply) => {
      const { email, role } = request.body;
      return orRefusal(reply, { form: { email, role } }, async () => {
        const password = generatePassword();
        const row = await createStaff(db, actor(request), { email, role, password }, now());
        return { secret: { email: row.email, password, why: 'created' as const } };
      });
    });

    app.post('/staff/:staffId/disable', { schema: { params: StaffParams, body: CsrfForm } }, async (request, reply) => {
      const row = await account(request.params.staffId);
      return orRefusal(reply, {}, async () => {
        notSelf(request, row.id, 'disable');
        const { sessionsEnded } = await disableStaff(db, actor(request), row.email, now());
        return { done: `Disabled ${row.email}; ${sessionsEnded} session${sessionsEnded === 1 ? '' : 's'} ended.` };
      });
    });

    app.post('/staff/:staffId/enable', { schema: { params: StaffParams, body: CsrfForm } }, async (request, reply) => {
      const row = await account(request.params.staffId);
      return orRefusal(reply, {}, async () => {
        await enableStaff(db, actor(request), row.email, now());
        return { done: `Enabled ${row.email}.` };
      });
    });

    app.post('/staff/:staffId/reset-password', { schema: { params: StaffParams, body: CsrfForm } }, async (request, reply) => {
      const row = await account(request.params.staffId);
      return orRefusal(reply, {}, async () => {
        const reset = await createStaffPasswordReset(db, actor(request), row.email, now());
        // The console's own origin: the link is for staff, who reach the console where the owner does.
        return { reset: { email: reset.email, url: staffPasswordResetUrl(`${request.protocol}://${request.host}`, reset.token), expiresAt: reset.expiresAt } };
      });
    });

    app.post('/staff/:staffId/role', { schema: { params: StaffParams, body: StaffRoleForm } }, async (request, reply) => {
      const row = await account(request.params.staffId);
      return orRefusal(reply, {}, async () => {
        notSelf(request, row.id, 'change the role of');
        await setStaffRole(db, actor(request), row.email, request.body.role, now());
        return { done: `${row.email} is now ${request.body.role}.` };
      });
    });
  },
};
