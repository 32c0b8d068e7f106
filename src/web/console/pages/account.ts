import { AppError } from '../../../domain/errors.ts';
import { ChangePasswordForm, CsrfForm, ResetLinkParams, ResetPasswordForm } from '../../../schemas/console.ts';
import { changeOwnPassword, mySessions, signOutEverywhere } from '../../../services/console-sessions.service.ts';
import { completeStaffPasswordReset, openStaffPasswordReset } from '../../../services/staff.service.ts';
import { changeOwnPasswordForm, clearSessionCookie, cookieName, isSecure } from '../../foundation.ts';
import { CONSOLE_COOKIE, CONSOLE_PREFIX, SIGN_IN_PATH } from '../console-routes.ts';
import { presentAccount, presentPasswordReset } from '../present-admin.ts';
import type { ConsolePage } from './context.ts';

/**
 * Your account (Hardening III, 5): change the password, see the sessions, sign out everywhere; and
 * the page a password reset link from an owner opens (issue 32, 5), which needs no session.
 */
export const accountPage: ConsolePage = {
  nav: [],
  routes: async (app, { config, store, buckets, now, page, forms, user }) => {
    const { db } = store;
    const view = async (request: Parameters<typeof user>[0], error: string | null = null) => {
      const me = user(request);
      return presentAccount(me.email, await mySessions(db, me, now()), error);
    };

    app.get('/account', async (request, reply) => page(reply, 200, 'account', await view(request)));

    app.post('/account/password', { schema: { body: ChangePasswordForm } }, async (request, reply) => {
      const me = user(request);
      return changeOwnPasswordForm(request, reply, request.body, {
        frontEnd: 'console',
        buckets,
        forms,
        email: me.email,
        change: (input) => changeOwnPassword(db, me, input, request.id, now()),
        refuse: async (status, error) => page(reply, status, 'account', await view(request, error)),
        accountPath: `${CONSOLE_PREFIX}/account`,
      });
    });

    app.post('/account/sign-out-everywhere', { schema: { body: CsrfForm } }, async (request, reply) => {
      await signOutEverywhere(db, user(request), request.id, now());
      const secure = isSecure(config, request);
      clearSessionCookie(reply, cookieName(CONSOLE_COOKIE, secure), secure);
      return reply.redirect(`${SIGN_IN_PATH}?everywhere=1`, 303);
    });

    // A password reset link (from an owner, or `stockist operator reset-password --link`): once, then sign in.
    const resetGone =
      'This password reset link is not valid: it may have expired (links last 24 hours), been replaced by a newer one, or been used already. Ask an owner for a new one.';
    const linkGone = (reply: Parameters<typeof page>[0]) => page(reply, 404, 'error', { title: 'Link not valid', message: resetGone });

    app.get('/password-reset/:token', { schema: { params: ResetLinkParams } }, async (request, reply) => {
      const reset = await openStaffPasswordReset(db, request.params.token, now());
      if (!reset) return linkGone(reply);
      return page(reply, 200, 'password-reset', presentPasswordReset(reset, request.params.token));
    });

    app.post('/password-reset/:token', { schema: { params: ResetLinkParams, body: ResetPasswordForm } }, async (request, reply) => {
      const { token } = request.params;
      const reset = await openStaffPasswordReset(db, token, now());
      if (!reset) return linkGone(reply);
      const again = (status: number, error: string) => page(reply, status, 'password-reset', presentPasswordReset(reset, token, error));
      if (request.body.password !== request.body.confirm) return again(400, 'The two passwords differ.');
      try {
        await completeStaffPasswordReset(db, token, request.body.password, request.id, now());
      } catch (error) {
        if (error instanceof AppError && error.kind === 'invalid') return again(400, `The password ${error.errors?.[0]?.message ?? error.message}.`);
        if (error instanceof AppError && error.kind === 'not_found') return linkGone(reply);
        throw error;
      }
      return reply.redirect(`${SIGN_IN_PATH}?reset=1`, 303);
    });
  },
};
