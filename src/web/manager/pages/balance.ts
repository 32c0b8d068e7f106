import { monthOf } from '../../../domain/ledger.ts';
import { presentBalance } from '../present.ts';
import { presentAccount } from '../../../present/account.presenter.ts';
import { BalanceQuery, StatementQuery } from '../../../schemas/manager.ts';
import { accountOf, transactionsCsv, transactionsOf } from '../../../services/ledger.service.ts';
import { statementFile } from '../../../services/statement.service.ts';
import { sendCsv } from '../../csv.ts';
import type { ManagerPage } from './context.ts';

const PAGE_SIZE = 25;
/** The transactions' count stops here (services/ledger.service.ts, SPEC §4.6). */
const TRANSACTIONS_COUNT_CAP = 10_000;
/** The months a statement can be chosen from: this one and the eleven before it. */
const MONTHS_LISTED = 12;

/**
 * Balance (SPEC §15, viewer and up): the account in this server's environment, its transactions
 * (keyset pages, linked to their orders), and a monthly statement — opening balance, every
 * transaction, closing balance — as a page, CSV or PDF.
 */
export const balancePage: ManagerPage = {
  nav: [{ href: '/manager/balance', label: 'Balance', permission: 'balance:read' }],
  routes: async (app, { config, now, page, user, merchant, statements }) => {
    const scopeOf = merchant;

    app.get('/balance', { schema: { querystring: BalanceQuery } }, async (request, reply) => {
      const scope = scopeOf(request);
      const account = presentAccount(await accountOf(scope, config));
      const result = await transactionsOf(scope, config.env, { pageSize: PAGE_SIZE, cursor: request.query.cursor || undefined });
      const current = new Date(now());
      const months = Array.from({ length: MONTHS_LISTED }, (_, i) => monthOf(Date.UTC(current.getUTCFullYear(), current.getUTCMonth() - i, 1)));
      return page(reply, 200, 'balance', presentBalance(account, result, months, TRANSACTIONS_COUNT_CAP));
    });

    // Every transaction of the account (this server's environment) as a CSV file.
    app.get('/balance/transactions.csv', async (request, reply) => sendCsv(reply, transactionsCsv(scopeOf(request), config.env), now()));

    // The file streams as it is made; a merchant with a statement already in the making is told to wait (429).
    app.get('/balance/statement', { schema: { querystring: StatementQuery } }, async (request, reply) => {
      const { month, format } = request.query;
      // A PDF waiting for a thread sends nothing: the idle timeout would close its connection
      // (issue 41's three 73k-line PDFs at once); it applies again once the file is being made.
      // (app.inject's stand-in socket has no timeout to set.)
      const idleTimeout = (ms: number) => (request.raw.socket as { setTimeout?: (ms: number) => void } | null)?.setTimeout?.(ms);
      idleTimeout(0);
      const timeoutAgain = () => idleTimeout(config.connectionTimeoutMs);
      const file = await statementFile(
        statements,
        scopeOf(request),
        {
          environment: config.env,
          month,
          currency: config.supplierCurrency,
          format,
          merchantName: user(request).merchantName,
          issuer: config.supplier,
          now: now(),
        },
        timeoutAgain,
      ).catch((error: unknown) => {
        timeoutAgain();
        throw error;
      });
      const name = `statement-${month}-${config.env}.${format}`;
      return reply
        .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/pdf')
        .header('Content-Disposition', `attachment; filename="${name}"`)
        .send(file);
    });
  },
};
