import type { KyselyPlugin } from 'kysely';

/**
 * A Kysely plugin that counts the statements sent (BEGIN, COMMIT and savepoints are raw and not
 * counted): one result per executed statement — `transformQuery` also sees every subquery and CTE,
 * so the count is taken on results. Used by bench/write-path-cost.ts and the statement-count tests.
 */
export function statementCounter(): KyselyPlugin & { n: number } {
  return {
    n: 0,
    transformQuery: (a) => a.node,
    async transformResult(a) {
      this.n++;
      return a.result;
    },
  };
}
