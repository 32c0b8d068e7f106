import { emailFingerprint } from '../../../domain/staff.ts';
import { CsrfForm, SignInForm, SignInQuery } from '../../../schemas/console.ts';
import { signIn, signOut } from '../../../services/console-sessions.service.ts';
import { clearSessionCookie, cookieName, isSecure, setSessionCookie, signInSucceeded, signInWait } from '../../foundation.ts';
import { CONSOLE_COOKIE, CONSOLE_PREFIX, SIGN_IN_PATH } from '../console-routes.ts';
import { presentSignIn } from '../present-admin.ts';
import type { ConsolePage } from './context.ts';

/** Sign-in (limited per account and per address) and sign-out. */
export const signInPage: ConsolePage = {
  nav: [],
  routes: async (app, { config, store, buckets, now, sessionLimits, page, forms, user }) => {
    app.get('/sign-in', { schema: { querystring: SignInQuery } }, async (request, reply) => {
      if (request.consoleUser) return reply.redirect(CONSOLE_PREFIX, 303);
      // After a password reset link was used (account.ts): say so, since the link page is gone.
      return page(reply, 200, 'sign-in', presentSignIn({ passwordReset: request.query.reset === '1', signedOutEverywhere: request.query.everywhere === '1' }));
    });

    app.post('/sign-in', { schema: { body: SignInForm } }, async (request, reply) => {
      const { email, password } = request.body;
      const wait = await signInWait(buckets, 'console', email, request.ip);
      if (wait !== null) {
        request.log.warn({ emailFingerprint: emailFingerprint(email), address: request.ip }, 'console sign-in limited');
        reply.header('Retry-After', String(wait));
        return page(reply, 429, 'sign-in', presentSignIn({ email, error: `Too many sign-in attempts; try again in ${wait} s.` }));
      }
      const started = await signIn(store.db, { email, password, address: request.ip, requestId: request.id }, sessionLimits, now());
      if (!started) {
        request.log.warn({ emailFingerprint: emailFingerprint(email), address: request.ip }, 'console sign-in failed');
        return page(reply, 401, 'sign-in', presentSignIn({ email, error: 'Wrong email or password, or the account is disabled.' }));
      }
      await signInSucceeded(buckets, 'console', email, request.ip);
      const secure = isSecure(config, request);
      setSessionCookie(reply, cookieName(CONSOLE_COOKIE, secure), started.sessionId, secure, Math.floor(sessionLimits.maxMs / 1000));
      // Back to a form sent after the session ended, if this browser has one kept.
      return reply.redirect((await forms.keptPage(request)) ?? CONSOLE_PREFIX, 303);
    });

    app.post('/sign-out', { schema: { body: CsrfForm } }, async (request, reply) => {
      await signOut(store.db, user(request), request.id, now());
      clearSessionCookie(reply, cookieName(CONSOLE_COOKIE, isSecure(config, request)), isSecure(config, request));
      return reply.redirect(SIGN_IN_PATH, 303);
    });
  },
};
