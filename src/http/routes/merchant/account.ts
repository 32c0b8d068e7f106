import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../../config.ts';
import { presentAccount } from '../../../present/account.presenter.ts';
import { AccountRecord, TransactionsPage, TransactionsQuery } from '../../../schemas/account.ts';
import { MerchantResponses } from '../../../schemas/common.ts';
import { accountOf, transactionsOf } from '../../../services/ledger.service.ts';
import type { Db, Store } from '../../../store/db.ts';
import type { MerchantScope } from '../../../store/tenancy.ts';

const ACCOUNT = ['Account'];

/** SPEC §15: the merchant's money account in this server's environment, and its transactions (scope account:read). */
export const accountRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config }> = async (app, { config }) => {
  const scopeOf = (request: { merchant: MerchantScope<Db> | null }) => request.merchant!;
  app.get(
    '/v1/account',
    {
      schema: {
        operationId: 'getAccount',
        summary: 'Your account: balance, credit limit, available, billing mode',
        description:
          'Orders are charged to this account when placed and refunds credited back when they succeed. A `prepaid` account accepts an order only when `available` covers its `finalAmount` (otherwise 422/42203).',
        tags: ACCOUNT,
        response: MerchantResponses(AccountRecord),
      },
    },
    async (request) => presentAccount(await accountOf(scopeOf(request), config)),
  );
  app.get(
    '/v1/account/transactions',
    {
      schema: {
        operationId: 'listAccountTransactions',
        summary: 'Your account’s transactions, newest first',
        description:
          'Charges, refund credits, top-ups and adjustments, each with the balance after it. Page by number, or walk with `cursor` (follow `nextCursor` until it is null).',
        tags: ACCOUNT,
        querystring: TransactionsQuery,
        response: MerchantResponses(TransactionsPage),
      },
    },
    async (request) => transactionsOf(scopeOf(request), config.env, request.query),
  );
};
