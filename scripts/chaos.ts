/**
 * `npm run chaos [-- --dialect sqlite|postgres|both] [--kills N] [--worker-kills N] [--backup-kills N] [--concurrency N] [--seed N]`
 * The crash test of scripts/chaos/harness.ts against real server processes. PostgreSQL uses
 * TEST_DATABASE_URL (or --pg URL) to create and drop a throwaway database. Exits 1 on any failure.
 */
import { parseArgs } from 'node:util';
import { formatSummary, runChaos } from './chaos/harness.ts';

const { values } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'both' },
    kills: { type: 'string', default: '6' },
    'worker-kills': { type: 'string', default: '3' },
    'backup-kills': { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '16' },
    'answers-before-kill': { type: 'string', default: '40' },
    'max-kill-delay': { type: 'string', default: '1500' },
    seed: { type: 'string' },
    pg: { type: 'string', default: process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL },
  },
});
const pgUrl = values.pg?.startsWith('postgres') ? values.pg : undefined;
const dialects = values.dialect === 'both' ? (pgUrl ? ['sqlite', 'postgres'] : ['sqlite']) : [values.dialect];
if (values.dialect === 'both' && !pgUrl) console.log('PostgreSQL skipped: set TEST_DATABASE_URL (or --pg) to include it');

let failed = false;
for (const dialect of dialects) {
  if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error(`--dialect must be sqlite, postgres or both (got ${dialect})`);
  console.log(`chaos on ${dialect}…`);
  const summary = await runChaos({
    dialect,
    pgUrl,
    serverKills: Number(values.kills),
    workerKills: Number(values['worker-kills']),
    backupKills: Number(values['backup-kills']),
    concurrency: Number(values.concurrency),
    answersBeforeKill: Number(values['answers-before-kill']),
    maxKillDelayMs: Number(values['max-kill-delay']),
    seed: values.seed === undefined ? undefined : Number(values.seed),
    log: (line) => console.log(line),
  });
  console.log(formatSummary(summary));
  if (summary.failures.length) failed = true;
}
process.exit(failed ? 1 : 0);
