import { AppError } from '../../../domain/errors.ts';
import { emailFingerprint } from '../../../domain/staff.ts';
import {
  ChangePasswordForm,
  CodeForm,
  InvitationParams,
  ManagerCsrfForm,
  ManagerSignInForm,
  PasswordForm,
  RecoveryCodesForm,
  TwoFactorForm,
} from '../../../schemas/manager.ts';
import {
  changePassword,
  completePasswordReset,
  mySessions,
  openPasswordReset,
  signOutEverywhere,
  signIn,
  signOut,
} from '../../../services/manager-sessions.service.ts';
import { acceptInvitation, openInvitation } from '../../../services/merchant-invitations.service.ts';
import {
  disableTwoFactor,
  enableTwoFactor,
  pendingTwoFactor,
  recoveryCodesLeft,
  regenerateRecoveryCodes,
  verifySignInCode,
} from '../../../services/merchant-two-factor.service.ts';
import { changeOwnPasswordForm, clearSessionCookie, cookieName, isSecure, setSessionCookie, signInSucceeded, signInWait } from '../../foundation.ts';
import { MANAGER_COOKIE, MANAGER_PREFIX, MANAGER_SIGN_IN_PATH } from '../manager-routes.ts';
import { signInDone } from '../../shared/present.ts';
import { SignInQuery } from '../../../schemas/console.ts';
import {
  presentInvitation,
  presentManagerAccount,
  presentManagerCode,
  presentManagerPasswordReset,
  presentManagerSignIn,
  presentTwoFactor,
} from '../present-team.ts';
import type { ManagerPage } from './context.ts';

/** Sign-in (password, then a TOTP code when enrolled), invitations, two-factor enrolment, sign-out. */
export const accountPage: ManagerPage = {
  nav: [],
  routes: async (app, { config, store, buckets, now, sessionLimits, page, forms, user, merchant, actor }) => {
    const { db } = store;
    app.get('/sign-in', { schema: { querystring: SignInQuery } }, async (request, reply) => {
      if (request.managerUser) return reply.redirect(MANAGER_PREFIX, 303);
      // After a write that ended the session (a reset link used, signed out everywhere): say what it did.
      const done = signInDone({ passwordReset: request.query.reset === '1', signedOutEverywhere: request.query.everywhere === '1' });
      return page(reply, 200, 'sign-in', presentManagerSignIn('', null, null, done));
    });

    app.post('/sign-in', { schema: { body: ManagerSignInForm } }, async (request, reply) => {
      const { email, password } = request.body;
      const wait = await signInWait(buckets, 'manager', email, request.ip);
      if (wait !== null) {
        request.log.warn({ emailFingerprint: emailFingerprint(email), address: request.ip }, 'manager sign-in limited');
        reply.header('Retry-After', String(wait));
        return page(reply, 429, 'sign-in', presentManagerSignIn(email, `Too many sign-in attempts; try again in ${wait} s.`));
      }
      const merchantId = request.body.merchant;
      const started = await signIn(db, { email, password, address: request.ip, requestId: request.id, merchantId }, sessionLimits, now());
      if (!started) {
        request.log.warn({ emailFingerprint: emailFingerprint(email), address: request.ip }, 'manager sign-in failed');
        return page(reply, 401, 'sign-in', presentManagerSignIn(email, 'Wrong email or password, or the account is disabled.'));
      }
      if ('choose' in started)
        return page(
          reply,
          200,
          'sign-in',
          presentManagerSignIn(
            email,
            'This email and password open accounts at more than one business: choose one, and enter the password again.',
            started.choose,
          ),
        );
      await signInSucceeded(buckets, 'manager', email, request.ip);
      const secure = isSecure(config, request);
      setSessionCookie(reply, cookieName(MANAGER_COOKIE, secure), started.sessionId, secure, Math.floor(sessionLimits.maxMs / 1000));
      // Back to a form sent after the session ended, if one is kept (once the code is in, with two-factor).
      if (started.stage !== 'complete') return reply.redirect(`${MANAGER_PREFIX}/sign-in/code`, 303);
      return reply.redirect((await forms.keptPage(request)) ?? MANAGER_PREFIX, 303);
    });

    app.get('/sign-in/code', async (_request, reply) => page(reply, 200, 'code', presentManagerCode()));

    app.post('/sign-in/code', { schema: { body: CodeForm } }, async (request, reply) => {
      // The code is a guess like a password: it draws on the same per-account and per-address limits.
      const wait = await signInWait(buckets, 'manager', user(request).email, request.ip);
      if (wait !== null) {
        reply.header('Retry-After', String(wait));
        return page(reply, 429, 'code', presentManagerCode(`Too many attempts; try again in ${wait} s.`));
      }
      if (!(await verifySignInCode(db, user(request), request.body.code.replace(/\s+/g, ''), request.ip, request.id, now())))
        return page(
          reply,
          401,
          'code',
          presentManagerCode('That code is not right (or was used already): wait for the next one, or enter an unused recovery code.'),
        );
      await signInSucceeded(buckets, 'manager', user(request).email, request.ip);
      return reply.redirect((await forms.keptPage(request)) ?? MANAGER_PREFIX, 303);
    });

    app.post('/sign-out', { schema: { body: ManagerCsrfForm } }, async (request, reply) => {
      await signOut(db, user(request), request.id, now());
      const secure = isSecure(config, request);
      clearSessionCookie(reply, cookieName(MANAGER_COOKIE, secure), secure);
      return reply.redirect(MANAGER_SIGN_IN_PATH, 303);
    });

    const invitationGone = 'This invitation link is not valid: it may have expired (links last 72 hours) or been used already. Ask for a new one.';

    app.get('/invitations/:token', { schema: { params: InvitationParams } }, async (request, reply) => {
      const invitation = await openInvitation(db, request.params.token, now());
      if (!invitation) return page(reply, 404, 'error', { title: 'Invitation not valid', message: invitationGone });
      return page(reply, 200, 'invitation', presentInvitation(invitation, request.params.token));
    });

    app.post('/invitations/:token', { schema: { params: InvitationParams, body: PasswordForm } }, async (request, reply) => {
      const { token } = request.params;
      const invitation = await openInvitation(db, token, now());
      if (!invitation) return page(reply, 404, 'error', { title: 'Invitation not valid', message: invitationGone });
      const again = (status: number, error: string) => page(reply, status, 'invitation', presentInvitation(invitation, token, error));
      if (request.body.password !== request.body.confirm) return again(400, 'The two passwords differ.');
      try {
        await acceptInvitation(db, token, request.body.password, request.id, now());
      } catch (error) {
        if (error instanceof AppError && error.kind === 'invalid') return again(400, `The password ${error.errors?.[0]?.message ?? error.message}.`);
        throw error;
      }
      // Signed in at once: the person who set the password is the one holding the link.
      const started = await signIn(
        db,
        { email: invitation.email, password: request.body.password, address: request.ip, requestId: request.id, merchantId: invitation.merchant_id },
        sessionLimits,
        now(),
      );
      const secure = isSecure(config, request);
      if (started && 'sessionId' in started) {
        setSessionCookie(reply, cookieName(MANAGER_COOKIE, secure), started.sessionId, secure, Math.floor(sessionLimits.maxMs / 1000));
        await forms.flashToNewSession(started.sessionId, 'notice', {
          text: `Invitation accepted: your password is set and you are signed in to ${invitation.merchant_name} as ${invitation.email}.`,
        });
      }
      return reply.redirect(MANAGER_PREFIX, 303);
    });

    // Your account (Hardening III, 5): change the password, see the sessions, sign out everywhere.
    const accountView = async (request: Parameters<typeof user>[0], error: string | null) =>
      presentManagerAccount(user(request), await mySessions(db, user(request), now()), error);

    app.get('/account', async (request, reply) => page(reply, 200, 'account', await accountView(request, null)));

    app.post('/account/password', { schema: { body: ChangePasswordForm } }, async (request, reply) => {
      const me = user(request);
      return changeOwnPasswordForm(request, reply, request.body, {
        frontEnd: 'manager',
        buckets,
        forms,
        email: me.email,
        change: (input) => changePassword(db, me, input, request.id, now()),
        refuse: async (status, error) => page(reply, status, 'account', await accountView(request, error)),
        accountPath: `${MANAGER_PREFIX}/account`,
      });
    });

    app.post('/account/sign-out-everywhere', { schema: { body: ManagerCsrfForm } }, async (request, reply) => {
      await signOutEverywhere(db, user(request), request.id, now());
      const secure = isSecure(config, request);
      clearSessionCookie(reply, cookieName(MANAGER_COOKIE, secure), secure);
      return reply.redirect(`${MANAGER_SIGN_IN_PATH}?everywhere=1`, 303);
    });

    // A password reset link (from an admin or the operator): like an invitation, once, then sign in.
    const resetGone = 'This password reset link is not valid: it may have expired (links last 24 hours), been replaced or used already. Ask for a new one.';

    app.get('/password-reset/:token', { schema: { params: InvitationParams } }, async (request, reply) => {
      const reset = await openPasswordReset(db, request.params.token, now());
      if (!reset) return page(reply, 404, 'error', { title: 'Link not valid', message: resetGone });
      return page(reply, 200, 'password-reset', presentManagerPasswordReset(reset, request.params.token));
    });

    app.post('/password-reset/:token', { schema: { params: InvitationParams, body: PasswordForm } }, async (request, reply) => {
      const { token } = request.params;
      const reset = await openPasswordReset(db, token, now());
      if (!reset) return page(reply, 404, 'error', { title: 'Link not valid', message: resetGone });
      const again = (status: number, error: string) => page(reply, status, 'password-reset', presentManagerPasswordReset(reset, token, error));
      if (request.body.password !== request.body.confirm) return again(400, 'The two passwords differ.');
      try {
        await completePasswordReset(db, token, request.body.password, request.id, now());
      } catch (error) {
        if (error instanceof AppError && error.kind === 'invalid') return again(400, `The password ${error.errors?.[0]?.message ?? error.message}.`);
        throw error;
      }
      return reply.redirect(`${MANAGER_SIGN_IN_PATH}?reset=1`, 303);
    });

    // The two-factor page: enrolment (the key as a QR code and as text) while it is off; how many
    // recovery codes are left while it is on. `recoveryCodes`: new codes, shown this once (after
    // the 303 of turning it on or of "Make new recovery codes").
    const TWO_FACTOR = `${MANAGER_PREFIX}/two-factor`;
    const twoFactorPage = async (
      request: Parameters<typeof user>[0],
      reply: Parameters<typeof page>[0],
      status: number,
      shown: { error?: string; recoveryCodes?: string[] | null } = {},
    ) => {
      const me = user(request);
      let state: Parameters<typeof presentTwoFactor>[1];
      if (me.twoFactor) state = { on: true, recoveryCodesLeft: await recoveryCodesLeft(merchant(request), me) };
      else {
        const pending = await pendingTwoFactor(db, me, now());
        // qrcode + pngjs are loaded at the first set-up page, not with the server (docs/performance.md, "Memory on Node 24").
        const { qrCodeSvg } = await import('../../qr-code.ts');
        state = { on: false, pending, qrSvg: await qrCodeSvg(pending.uri, 'QR code of the key, for an authenticator app to scan') };
      }
      return page(reply, status, 'two-factor', presentTwoFactor(me, state, shown));
    };

    app.get('/two-factor', async (request, reply) =>
      twoFactorPage(request, reply, 200, { recoveryCodes: await forms.take<string[]>(request, 'recovery-codes') }),
    );

    // Each try at a password or code here draws on the sign-in limits of the account and the
    // address, like the code page (Hardening III, 3): the seconds to wait, or null to go ahead.
    const limited = async (request: Parameters<typeof user>[0], reply: Parameters<typeof page>[0], what: string) => {
      const me = user(request);
      const wait = await signInWait(buckets, 'manager', me.email, request.ip);
      if (wait !== null) {
        request.log.warn({ emailFingerprint: emailFingerprint(me.email), address: request.ip }, `manager ${what} limited`);
        reply.header('Retry-After', String(wait));
      }
      return wait;
    };
    const tooMany = (wait: number) => ({ error: `Too many attempts; try again in ${wait} s.` });
    // A refusal writes nothing and answers the form again with the reason (its form key unspent).
    const refused = (request: Parameters<typeof user>[0], reply: Parameters<typeof page>[0], what: string, error: unknown) => {
      if (!(error instanceof AppError) || error.kind !== 'invalid') throw error;
      request.log.warn({ emailFingerprint: emailFingerprint(user(request).email), address: request.ip }, `manager ${what} refused`);
      return twoFactorPage(request, reply, 400, { error: `The ${error.errors?.[0]?.field ?? 'code'} ${error.errors?.[0]?.message ?? error.message}.` });
    };
    /** New recovery codes: kept for the two-factor page, shown there once (POST → 303 → GET). */
    const shownOnce = async (request: Parameters<typeof user>[0], reply: Parameters<typeof page>[0], recoveryCodes: string[]) => {
      await forms.flash(request, 'recovery-codes', recoveryCodes);
      return reply.redirect(TWO_FACTOR, 303);
    };

    // Turning two-factor on or off takes the current password and a code. Turning it on makes the
    // account's ten recovery codes, shown once on the page the 303 leads to (only their hashes are
    // kept); its form applies once (a one-time key), so a resubmission makes no other codes.
    app.post('/two-factor/enable', { schema: { body: TwoFactorForm } }, async (request, reply) => {
      const wait = await limited(request, reply, 'two-factor enable');
      if (wait !== null) return twoFactorPage(request, reply, 429, tooMany(wait));
      let recoveryCodes: string[];
      try {
        ({ recoveryCodes } = await enableTwoFactor(
          db,
          user(request),
          actor(request),
          { password: request.body.password, code: request.body.code.replace(/\s+/g, '') },
          now(),
        ));
      } catch (error) {
        return refused(request, reply, 'two-factor enable', error);
      }
      return shownOnce(request, reply, recoveryCodes);
    });

    app.post('/two-factor/disable', { schema: { body: TwoFactorForm } }, async (request, reply) => {
      const wait = await limited(request, reply, 'two-factor disable');
      if (wait !== null) return twoFactorPage(request, reply, 429, tooMany(wait));
      try {
        await disableTwoFactor(db, user(request), { password: request.body.password, code: request.body.code.replace(/\s+/g, '') }, request.id, now());
      } catch (error) {
        return refused(request, reply, 'two-factor disable', error);
      }
      await forms.flash(request, 'notice', { text: 'Two-factor sign-in turned off.' });
      return reply.redirect(TWO_FACTOR, 303);
    });

    // New recovery codes in place of the old ones: the current password or a current code. Once
    // only, like turning it on: a resubmission does not replace the codes just shown.
    app.post('/two-factor/recovery-codes', { schema: { body: RecoveryCodesForm } }, async (request, reply) => {
      const wait = await limited(request, reply, 'recovery codes');
      if (wait !== null) return twoFactorPage(request, reply, 429, tooMany(wait));
      const proof = request.body.proof;
      let recoveryCodes: string[];
      try {
        ({ recoveryCodes } = await regenerateRecoveryCodes(
          db,
          user(request),
          actor(request),
          /^[\d\s]+$/.test(proof) ? proof.replace(/\s+/g, '') : proof,
          now(),
        ));
      } catch (error) {
        return refused(request, reply, 'recovery codes', error);
      }
      return shownOnce(request, reply, recoveryCodes);
    });
  },
};
