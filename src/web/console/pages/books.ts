import { AppError } from '../../../domain/errors.ts';
import { BankMatchForm, BooksQuery, JournalQuery } from '../../../schemas/console-operations.ts';
import { journalCsv, matchBankStatement, periodFor, supplierBooks } from '../../../services/books.service.ts';
import { sendCsv } from '../../csv.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentBooks } from '../present-books.ts';
import type { ConsolePage } from './context.ts';

/**
 * The supplier's books (issue 41, 9; owner only, `ledger:read`: every merchant's money at once):
 * its accounts and their balances, the journal of a period as CSV (streamed), and a bank statement
 * matched against the recorded top-ups. The match writes nothing, so its form is answered with the
 * report in the page (200), not a redirect: there is no change a reload could apply twice, and the
 * statement is not kept anywhere to show after one. A refused statement: the page again (400) with
 * every problem by line and what was typed.
 */
export const booksPage: ConsolePage = {
  nav: [{ href: `${CONSOLE_PREFIX}/books`, label: 'Books', permission: 'ledger:read' }],
  routes: async (app, { config, store, now, page }) => {
    app.get('/books', { schema: { querystring: BooksQuery } }, async (request, reply) => {
      const books = await supplierBooks(store.db, request.query.environment ?? config.env);
      return page(reply, 200, 'books', presentBooks(books, now()));
    });

    app.get('/books/journal.csv', { schema: { querystring: JournalQuery } }, async (request, reply) => {
      const { environment = config.env, ...period } = request.query;
      // The period is checked before the first byte: a bad one is a 400 page, not a broken download.
      return sendCsv(reply, journalCsv(store.db, environment, periodFor(period, now())), now());
    });

    app.post('/books/bank-match', { schema: { body: BankMatchForm } }, async (request, reply) => {
      const { environment = config.env, month = '', from = '', to = '', fileName = '', fileText = '' } = request.body;
      const fields = { month, from, to, fileName };
      const books = await supplierBooks(store.db, environment);
      try {
        if (fileText.trim() === '') throw new AppError('invalid', 40000, 'Choose the bank statement file (or paste its text): the form carried none.');
        const result = await matchBankStatement(store.db, environment, periodFor({ month, from, to }, now()), fileText);
        return page(reply, 200, 'books', presentBooks(books, now(), { fields, result }));
      } catch (error) {
        if (!(error instanceof AppError) || error.kind !== 'invalid') throw error;
        // A statement's problems by line are listed under the message; a single field's reason is the message.
        const problems = (error.errors ?? []).map((e) => e.message).filter((text) => !error.message.includes(text));
        const message = `Not compared: ${error.message.replace(/\.$/, '')}.`;
        return page(reply, 400, 'books', presentBooks(books, now(), { fields, refusal: { message, problems } }));
      }
    });
  },
};
