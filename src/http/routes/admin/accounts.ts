import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../../config.ts';
import { adminKeyActor } from '../../../domain/audit.ts';
import { fieldError } from '../../../domain/errors.ts';
import type { StockistEnv } from '../../../domain/vocabulary.ts';
import { presentAccount, presentTransaction } from '../../../present/account.presenter.ts';
import {
  AccountEnvironmentQuery,
  AccountPatchBody,
  AccountRecord,
  AdjustmentBody,
  AdminTransactionsQuery,
  PostedEntry,
  TopUpBody,
  TransactionsPage,
} from '../../../schemas/account.ts';
import { AdminResponses } from '../../../schemas/admin-responses.ts';
import { IdParams, IfMatchHeaders } from '../../../schemas/admin.ts';
import { ifMatchCheck, withEtag } from '../../etag.ts';
import { IdempotencyHeaders } from '../../../schemas/orders.ts';
import { accountForOperator, changeTerms, postByOperator, transactionsForOperator, type OperatorPosting } from '../../../services/ledger.service.ts';
import type { Store } from '../../../store/db.ts';
import type { RequestId } from '../../../domain/ids.ts';
import { scopeForOperator } from '../../../store/edge-scopes.ts';

const TAGS = ['Accounts'];

/**
 * The environment a PATCH changes: `?environment=` as SPEC §15 has it, or `environment` in the
 * body as earlier versions took it; both given must agree. A write names its environment: no
 * default to this server's, unlike the GET (docs/decisions.md).
 */
function environmentToChange(query: StockistEnv | undefined, body: StockistEnv | undefined): StockistEnv {
  if (query !== undefined && body !== undefined && query !== body) {
    throw fieldError('environment', `the query says ${query} and the body says ${body}: give it once, as ?environment=`);
  }
  const environment = query ?? body;
  if (environment === undefined) throw fieldError('environment', 'is required: ?environment=sandbox or ?environment=production');
  return environment;
}

/** SPEC §15: the operator's side of a merchant's money account; every write audited in its transaction. */
export const adminAccountRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config; adminApiKey: string }> = async (
  app,
  { store, config, adminApiKey },
) => {
  const { db } = store;
  const actor = (request: { id: string }) => adminKeyActor(adminApiKey, request.id);
  /** A top-up or an adjustment, answered with the transaction and the account after it (no second read). */
  const post = async (request: { id: string; params: { id: RequestId } }, posting: OperatorPosting) => {
    const r = await postByOperator(scopeForOperator(db, request.params.id), store.dialect, config, actor(request), posting, Date.now());
    return { replayed: r.replayed, transaction: presentTransaction(r.entry), account: presentAccount(r.account) };
  };

  app.get(
    '/merchants/:id/account',
    {
      schema: {
        summary: 'A merchant’s account in one environment (default: this server’s)',
        tags: TAGS,
        params: IdParams,
        querystring: AccountEnvironmentQuery,
        response: AdminResponses(AccountRecord),
      },
    },
    async (request, reply) => {
      const row = await accountForOperator(scopeForOperator(db, request.params.id), config, request.query.environment ?? config.env);
      // The ETag is the terms' version: a PATCH with it in If-Match is refused once the terms change, not when the balance moves.
      return withEtag(reply, row.terms_version, presentAccount(row));
    },
  );
  app.patch(
    '/merchants/:id/account',
    {
      schema: {
        summary: 'Set billing mode, credit limit and low-balance threshold',
        tags: TAGS,
        params: IdParams,
        querystring: AccountEnvironmentQuery,
        headers: IfMatchHeaders,
        body: AccountPatchBody,
        response: AdminResponses(AccountRecord),
      },
    },
    async (request, reply) => {
      const b = request.body;
      const row = await changeTerms(
        scopeForOperator(db, request.params.id),
        store.dialect,
        config,
        actor(request),
        environmentToChange(request.query.environment, b.environment),
        { billingMode: b.billingMode, creditLimitCents: b.creditLimit, lowBalanceThresholdCents: b.lowBalanceThreshold },
        Date.now(),
        ifMatchCheck(request.headers['if-match']),
      );
      return withEtag(reply, row.terms_version, presentAccount(row));
    },
  );
  app.post(
    '/merchants/:id/account/top-ups',
    {
      schema: {
        summary: 'Record a payment received (idempotent on `reference`: a repeat answers the first and posts nothing)',
        tags: TAGS,
        params: IdParams,
        body: TopUpBody,
        response: AdminResponses(PostedEntry),
      },
    },
    async (request) => post(request, { type: 'top_up', environment: request.body.environment, amountCents: request.body.amount, text: request.body.reference }),
  );
  app.post(
    '/merchants/:id/account/adjustments',
    {
      schema: {
        summary: 'Post a signed correction with a reason (an `Idempotency-Key` makes a retry post once)',
        tags: TAGS,
        params: IdParams,
        headers: IdempotencyHeaders,
        body: AdjustmentBody,
        response: AdminResponses(PostedEntry),
      },
    },
    async (request) => {
      const b = request.body;
      return post(request, { type: 'adjustment', environment: b.environment, amountCents: b.amount, text: b.reason, key: request.headers['idempotency-key'] });
    },
  );
  app.get(
    '/merchants/:id/account/transactions',
    {
      schema: {
        summary: 'A merchant account’s transactions, newest first',
        tags: TAGS,
        params: IdParams,
        querystring: AdminTransactionsQuery,
        response: AdminResponses(TransactionsPage),
      },
    },
    async (request) => transactionsForOperator(scopeForOperator(db, request.params.id), request.query.environment ?? config.env, request.query),
  );
};
