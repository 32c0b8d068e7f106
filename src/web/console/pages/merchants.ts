import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { can } from '../../../domain/staff.ts';
import { AppError, fieldError } from '../../../domain/errors.ts';
import { formVersion } from '../../../domain/edit-versions.ts';
import { FormAlreadySent } from '../../../domain/form-keys.ts';
import { httpStatus } from '../../../http/errors.ts';
import { parseAmount } from '../../../domain/ledger.ts';
import { ENVIRONMENTS } from '../../../domain/vocabulary.ts';
import { presentAccount } from '../../../present/account.presenter.ts';
import { accountForOperator, changeTerms, postByOperator, transactionsCsvForOperator, transactionsForOperator } from '../../../services/ledger.service.ts';
import { READ_SCOPES, SCOPES, tickedScopes } from '../../../domain/scopes.ts';
import { merchantBucketUse } from '../../../http/rate-limit.ts';
import {
  AccountTermsForm,
  ActionForm,
  AdjustmentForm,
  ConsoleIdParams,
  ConsoleInvitationParams,
  ConsoleMemberParams,
  ConsoleTokenParams,
  MerchantForm,
  MerchantPageQuery,
  TokenForm,
  TopUpForm,
  TransactionsPageQuery,
} from '../../../schemas/console-operations.ts';
import { merchantCredentials, merchantSummary, merchantTeam, revokeMerchantToken } from '../../../services/merchant-credentials.service.ts';
import { createMerchant, issueToken, merchantsNamed, setMerchantStatus } from '../../../services/merchants.service.ts';
import { forMerchant, type MerchantScope } from '../../../store/tenancy.ts';
import { listMerchants } from '../../../store/merchants.repository.ts';
import { formatInstant } from '../../../domain/time.ts';
import { invitationUrl } from '../../../domain/merchant-users.ts';
import { InviteForm } from '../../../schemas/manager.ts';
import { inviteUser, resendInvitation, revokeInvitation, type Invitation } from '../../../services/merchant-invitations.service.ts';
import { removeTeamMember } from '../../../services/merchant-team.service.ts';
import { resetTwoFactor } from '../../../services/merchant-two-factor.service.ts';
import { publicOrigin } from '../../foundation.ts';
import { sendCsv } from '../../csv.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentTransactions } from '../present.ts';
import {
  presentMerchant,
  presentMerchants,
  postingNotice,
  presentTermsConflict,
  termsNotice,
  type MoneyFormRefusal,
  type ShownSecret,
} from '../present-merchants.ts';
import type { ConsolePage } from './context.ts';

const MERCHANTS = `${CONSOLE_PREFIX}/merchants`;
const RECENT_TRANSACTIONS = 10;
const TRANSACTIONS_PAGE = 50;
/** The transactions' count stops here (services/ledger.service.ts, SPEC §4.6). */
const TRANSACTIONS_COUNT_CAP = 10_000;

const DAY_SECONDS = 86_400;

/** A refusal as one sentence: the message when it says it all (the prepaid floor's carries the numbers), else each field's reason. */
const refusalText = (error: AppError) =>
  error.kind === 'invalid' && error.errors?.length ? error.errors.map((e) => `${e.field} ${e.message}`).join('; ') : error.message;

/**
 * Merchants and their credentials (SPEC §14): list, create, disable and enable, bearer tokens
 * issued and revoked, and how much of its rate limits each is using now. Every form answers 303 to
 * the merchant's page. A secret (the OAuth client secret, a token, an invitation link) is shown
 * once, on that page right after the form (a one-time display sealed with the session's cookie:
 * web/foundation.ts): only its hash is kept, so no page can show it again.
 */
export const merchantsPage: ConsolePage = {
  nav: [{ href: MERCHANTS, label: 'Merchants', permission: 'merchants:read' }],
  routes: async (app, { config, store, buckets, now, page, forms, user, actor }) => {
    const { db } = store;

    const merchantsList = async (
      request: FastifyRequest,
      reply: FastifyReply,
      status: number,
      duplicate: { name: string; same: { id: string; name: string; status: string }[] } | null,
    ) => {
      const merchants = (await listMerchants(db)).map((m) => ({ id: m.id, name: m.name, status: m.status, createdAt: m.created_at }));
      return page(reply, status, 'merchants', presentMerchants(merchants, { canWrite: can(user(request).role, 'merchants:write'), duplicate }));
    };

    app.get('/merchants', async (request, reply) => merchantsList(request, reply, 200, null));

    app.post('/merchants', { schema: { body: MerchantForm } }, async (request, reply) => {
      // Another merchant with this name is most likely a second click or a typo'd search: ask, do not refuse.
      if (request.body.confirmDuplicate !== 'yes') {
        const same = await merchantsNamed(db, request.body.name);
        if (same.length > 0) return merchantsList(request, reply, 409, { name: request.body.name, same });
      }
      const created = await createMerchant(db, actor(request), request.body.name, now());
      return shownOnce(request, reply, String(created.merchantId), {
        title: `Merchant ${created.merchantId} created`,
        what: 'OAuth client secret',
        fields: [
          { label: 'Merchant id', value: String(created.merchantId), secret: false },
          { label: 'Client id', value: created.clientId, secret: false },
          { label: 'Client secret', value: created.clientSecret, secret: true },
        ],
      });
    });

    /** A new secret: kept for the merchant's page, shown there once (POST → 303 → GET). */
    const shownOnce = async (request: FastifyRequest, reply: FastifyReply, merchantId: string, secret: ShownSecret) => {
      await forms.flash(request, 'secret', { ...secret, merchantId });
      return reply.redirect(`${MERCHANTS}/${merchantId}`, 303);
    };

    /** The merchant's page; after a refused money form, with that form shown again in place (and the refusal's status). */
    const merchantPage = async (
      request: FastifyRequest,
      reply: FastifyReply,
      merchantId: string,
      query: Static<typeof MerchantPageQuery>,
      status: number,
      refusal: MoneyFormRefusal | null,
    ) => {
      const credentials = await merchantCredentials(forMerchant(db, Number(merchantId)), now(), query);
      const merchant = credentials.merchant;
      const rateLimit = await merchantBucketUse(buckets, config, { merchantId: Number(merchant.id), clientId: merchant.clientId });
      const accounts = await moneyOf(forMerchant(db, Number(merchant.id)));
      const team = await merchantTeam(forMerchant(db, Number(merchant.id)), now());
      return page(
        reply,
        status,
        'merchant',
        presentMerchant(credentials, {
          team,
          rateLimit,
          accounts,
          secret: refusal ? null : ((await forms.take<ShownSecret & { merchantId: string }>(request, 'secret')) ?? null),
          scopes: SCOPES,
          readScopes: READ_SCOPES,
          canWrite: can(user(request).role, 'merchants:write'),
          countCap: TRANSACTIONS_COUNT_CAP,
          refusal,
        }),
      );
    };

    app.get('/merchants/:id', { schema: { params: ConsoleIdParams, querystring: MerchantPageQuery } }, async (request, reply) =>
      merchantPage(request, reply, request.params.id, request.query, 200, null),
    );

    // SPEC §15: each environment's account, its newest transactions, and (owners) the money forms.
    const moneyOf = (merchant: MerchantScope) =>
      Promise.all(
        ENVIRONMENTS.map(async (environment) => {
          const row = await accountForOperator(merchant, config, environment);
          const account = { ...presentAccount(row), termsVersion: row.terms_version };
          const recent = await transactionsForOperator(merchant, environment, { pageSize: RECENT_TRANSACTIONS });
          return {
            ...account,
            current: environment === config.env,
            transactions: recent.list,
            total: recent.total,
            nextCursor: recent.nextCursor,
          };
        }),
      );
    const backTo = (reply: FastifyReply, merchantId: string, environment: string) => reply.redirect(`${MERCHANTS}/${merchantId}#account-${environment}`, 303);
    const amountOf = (text: string, signed: boolean) => {
      const cents = parseAmount(text, signed);
      if (cents === null) throw fieldError('amount', 'must be an amount with at most two decimals, e.g. 12.50');
      return cents;
    };

    /**
     * A money form's write: 303 to the account when done; refused (bad amount, the prepaid floor,
     * a reference used for another amount), the merchant's page again with the refusal's status,
     * the reason beside that form and what was typed in it — nothing written.
     */
    const moneyForm = async (
      request: FastifyRequest,
      reply: FastifyReply,
      merchantId: string,
      form: MoneyFormRefusal['form'],
      values: Record<string, string> & { environment: string },
      write: () => Promise<string>,
    ) => {
      let notice: string;
      try {
        notice = await write();
      } catch (error) {
        if (!(error instanceof AppError) || error instanceof FormAlreadySent || (error.kind !== 'invalid' && error.kind !== 'conflict')) throw error;
        const { environment, ...typed } = values;
        const refusal = { environment, form, message: refusalText(error), invalid: (error.errors ?? []).map((e) => e.field), values: typed };
        return merchantPage(request, reply, merchantId, {}, httpStatus(error), refusal);
      }
      await forms.flash(request, 'notice', { text: notice });
      return backTo(reply, merchantId, values.environment);
    };

    /** A posting by the signed-in staff member on the merchant's account, and the notice that says what it did. */
    const postAndTell = async (merchantId: string, by: ReturnType<typeof actor>, posting: Parameters<typeof postByOperator>[4]) =>
      postingNotice(posting.type, posting.environment, await postByOperator(forMerchant(db, Number(merchantId)), store.dialect, config, by, posting, now()));

    app.post('/merchants/:id/account/top-ups', { schema: { params: ConsoleIdParams, body: TopUpForm } }, async (request, reply) => {
      const b = request.body;
      return moneyForm(request, reply, request.params.id, 'topUp', { environment: b.environment, amount: b.amount, reference: b.reference }, () =>
        postAndTell(request.params.id, actor(request), {
          type: 'top_up',
          environment: b.environment,
          amountCents: amountOf(b.amount, false),
          text: b.reference.trim(),
        }),
      );
    });

    app.post('/merchants/:id/account/adjustments', { schema: { params: ConsoleIdParams, body: AdjustmentForm } }, async (request, reply) => {
      const b = request.body;
      return moneyForm(request, reply, request.params.id, 'adjust', { environment: b.environment, amount: b.amount, reason: b.reason }, () =>
        postAndTell(request.params.id, actor(request), {
          type: 'adjustment',
          environment: b.environment,
          amountCents: amountOf(b.amount, true),
          text: b.reason.trim(),
          key: `console-${b.formKey}`,
        }),
      );
    });

    // The terms form carries the terms version it was read at: saved against another (a second tab,
    // another operator), nothing is written and the page shows both (409; docs/web.md, "Edit conflicts").
    app.post('/merchants/:id/account', { schema: { params: ConsoleIdParams, body: AccountTermsForm } }, async (request, reply) => {
      const b = request.body;
      const typed = { environment: b.environment, billingMode: b.billingMode, creditLimit: b.creditLimit, lowBalanceThreshold: b.lowBalanceThreshold ?? '' };
      const merchant = forMerchant(db, Number(request.params.id));
      try {
        return await moneyForm(request, reply, request.params.id, 'terms', typed, async () => {
          const threshold = b.lowBalanceThreshold === undefined || b.lowBalanceThreshold.trim() === '' ? null : amountOf(b.lowBalanceThreshold, false);
          const saved = await changeTerms(
            merchant,
            store.dialect,
            config,
            actor(request),
            b.environment,
            { billingMode: b.billingMode, creditLimitCents: amountOf(b.creditLimit, false), lowBalanceThresholdCents: threshold },
            now(),
            formVersion(b.version),
          );
          return termsNotice(b.environment, saved);
        });
      } catch (error) {
        if (!(error instanceof AppError) || error.kind !== 'precondition_failed') throw error;
        const stored = await accountForOperator(merchant, config, b.environment);
        return page(
          reply,
          409,
          'edit-conflict',
          presentTermsConflict(request.params.id, b, {
            billingMode: stored.billing_mode,
            creditLimitCents: stored.credit_limit_cents,
            lowBalanceThresholdCents: stored.low_balance_threshold_cents,
            termsVersion: stored.terms_version,
          }),
        );
      }
    });

    app.get('/merchants/:id/transactions', { schema: { params: ConsoleIdParams, querystring: TransactionsPageQuery } }, async (request, reply) => {
      const merchantId = Number(request.params.id);
      const environment = request.query.environment ?? config.env;
      const merchant = await merchantSummary(forMerchant(db, merchantId));
      const result = await transactionsForOperator(forMerchant(db, merchantId), environment, {
        pageSize: TRANSACTIONS_PAGE,
        cursor: request.query.cursor || undefined,
      });
      return page(reply, 200, 'transactions', presentTransactions(merchant, environment, result, TRANSACTIONS_COUNT_CAP, config.supplierCurrency));
    });

    // Every transaction of the account as a CSV file.
    app.get('/merchants/:id/transactions.csv', { schema: { params: ConsoleIdParams, querystring: TransactionsPageQuery } }, async (request, reply) => {
      const environment = request.query.environment ?? config.env;
      return sendCsv(reply, await transactionsCsvForOperator(forMerchant(db, Number(request.params.id)), environment), now());
    });

    for (const [verb, status] of [
      ['disable', 'disabled'],
      ['enable', 'active'],
    ] as const) {
      app.post(`/merchants/:id/${verb}`, { schema: { params: ConsoleIdParams, body: ActionForm } }, async (request, reply) => {
        await setMerchantStatus(forMerchant(db, Number(request.params.id)), actor(request), status, now());
        await forms.flash(request, 'notice', {
          text: verb === 'disable' ? 'Merchant disabled: its tokens are refused until it is enabled again.' : 'Merchant enabled.',
        });
        return reply.redirect(`${MERCHANTS}/${request.params.id}`, 303);
      });
    }

    app.post('/merchants/:id/tokens', { schema: { params: ConsoleIdParams, body: TokenForm } }, async (request, reply) => {
      const days = request.body.expiresInDays ? Number(request.body.expiresInDays) : undefined;
      // Least privilege, the business manager's rule too: nothing ticked is refused (400), nothing written.
      const scopes = tickedScopes(request.body.scopes);
      const issued = await issueToken(
        forMerchant(db, Number(request.params.id)),
        actor(request),
        config.env,
        { scopes, expiresInSeconds: days && days * DAY_SECONDS },
        now(),
      );
      return shownOnce(request, reply, String(issued.merchantId), {
        title: `Token ${issued.tokenId} issued`,
        what: 'bearer token',
        fields: [
          { label: 'Token id', value: String(issued.tokenId), secret: false },
          { label: 'Scopes', value: issued.scopes.join(' '), secret: false },
          { label: 'Expires', value: formatInstant(issued.expiresAt) ?? 'never', secret: false },
          { label: 'Access token', value: issued.accessToken, secret: true },
        ],
      });
    });

    /** A one-time link to the merchant's business manager (SPEC §14), shown once. */
    const linkShownOnce = (request: FastifyRequest, reply: FastifyReply, invitation: Invitation, title: string) =>
      shownOnce(request, reply, String(invitation.merchantId), {
        title,
        what: 'invitation link',
        fields: [
          { label: 'Email', value: invitation.email, secret: false },
          { label: 'Role', value: invitation.role, secret: false },
          { label: 'Valid until', value: formatInstant(invitation.expiresAt), secret: false },
          { label: 'Link (works once)', value: invitationUrl(publicOrigin(config, request), invitation.token), secret: true },
        ],
      });

    app.post('/merchants/:id/users', { schema: { params: ConsoleIdParams, body: InviteForm } }, async (request, reply) => {
      const invitation = await inviteUser(
        forMerchant(db, Number(request.params.id)),
        actor(request),
        { email: request.body.email, role: request.body.role },
        now(),
      );
      return linkShownOnce(request, reply, invitation, `${invitation.email} invited`);
    });

    // The merchant's users and invitations, as its admins handle them on the Team page; audited as this staff member.
    const backToUsers = async (request: FastifyRequest, reply: FastifyReply, merchantId: string, text: string) => {
      await forms.flash(request, 'notice', { text });
      return reply.redirect(`${MERCHANTS}/${merchantId}#manager-users`, 303);
    };

    app.post('/merchants/:id/invitations/:invitationId/resend', { schema: { params: ConsoleInvitationParams, body: ActionForm } }, async (request, reply) => {
      const invitation = await resendInvitation(forMerchant(db, Number(request.params.id)), actor(request), Number(request.params.invitationId), now());
      return linkShownOnce(request, reply, invitation, `New invitation link for ${invitation.email}`);
    });

    app.post('/merchants/:id/invitations/:invitationId/cancel', { schema: { params: ConsoleInvitationParams, body: ActionForm } }, async (request, reply) => {
      const cancelled = await revokeInvitation(forMerchant(db, Number(request.params.id)), actor(request), Number(request.params.invitationId), now());
      return backToUsers(request, reply, request.params.id, `Invitation of ${cancelled.email} cancelled: its link no longer works.`);
    });

    app.post('/merchants/:id/users/:userId/remove', { schema: { params: ConsoleMemberParams, body: ActionForm } }, async (request, reply) => {
      await removeTeamMember(forMerchant(db, Number(request.params.id)), actor(request), Number(request.params.userId), now());
      return backToUsers(request, reply, request.params.id, 'User removed: the account and its sessions are gone.');
    });

    app.post('/merchants/:id/users/:userId/reset-two-factor', { schema: { params: ConsoleMemberParams, body: ActionForm } }, async (request, reply) => {
      const { sessionsEnded } = await resetTwoFactor(
        forMerchant(db, Number(request.params.id)),
        actor(request),
        { userId: Number(request.params.userId) },
        now(),
      );
      return backToUsers(
        request,
        reply,
        request.params.id,
        `Two-factor sign-in reset; ${sessionsEnded} session${sessionsEnded === 1 ? '' : 's'} signed out. The user signs in with the password and sets up an app again.`,
      );
    });

    app.post('/merchants/:id/tokens/:tokenId/revoke', { schema: { params: ConsoleTokenParams, body: ActionForm } }, async (request, reply) => {
      await revokeMerchantToken(forMerchant(db, Number(request.params.id)), actor(request), Number(request.params.tokenId), now());
      await forms.flash(request, 'notice', { text: `Token ${request.params.tokenId} revoked.` });
      return reply.redirect(`${MERCHANTS}/${request.params.id}`, 303);
    });
  },
};
