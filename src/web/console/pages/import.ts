import { AppError, notFound } from '../../../domain/errors.ts';
import { ImportRefused, type ImportProblem } from '../../../domain/import-format.ts';
import { randomToken } from '../../../domain/secrets.ts';
import { CSV_COLUMNS } from '../../../domain/import-format.ts';
import { ImportForm, ImportJobParams } from '../../../schemas/console.ts';
import { importText, type ImportProgress, type ImportResult } from '../../../services/import.service.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import type { ConsolePage } from './context.ts';

/** An upload being imported, or imported: what its page shows while it runs and after. */
interface ImportJob {
  id: string;
  /** Only the staff member who started it sees it. */
  staffId: number;
  fileName: string;
  state: 'running' | 'done' | 'refused' | 'failed';
  progress: ImportProgress | null;
  result: ImportResult | null;
  problems: ImportProblem[];
  omitted: number;
  message: string | null;
}

/** Finished jobs kept for their pages (the newest); older ones answer 404. */
const KEPT_JOBS = 50;

const formats = {
  products: `${CSV_COLUMNS.products.required.join(',')}[,${CSV_COLUMNS.products.optional.join(',')}]`,
  stocks: CSV_COLUMNS.stocks.required.join(','),
};

/**
 * Import upload (import:run): a CSV of products or stocks, or a JSON catalogue document, imported
 * like `stockist import` — all or nothing, every bad row listed with its line. The import runs in
 * the background of this process; its page shows the progress (htmx polls it) and then the result.
 * One import at a time per process: it holds the database's write transaction until it is done.
 * Size limit and the reasons: docs/decisions.md, "Console import uploads".
 */
export const importPage: ConsolePage = {
  nav: [{ href: `${CONSOLE_PREFIX}/import`, label: 'Import', permission: 'import:run' }],
  routes: async (app, { store, now, page, user, actor }) => {
    const jobs = new Map<string, ImportJob>();
    const running = new Set<Promise<unknown>>();
    // Closing the app waits for a running import (its transaction commits or rolls back first).
    app.addHook('onClose', async () => {
      await Promise.allSettled([...running]);
    });

    app.get('/import', async (_request, reply) => page(reply, 200, 'import', { title: 'Import', formats, error: null, fileName: '' }));

    app.post('/import', { schema: { body: ImportForm } }, async (request, reply) => {
      const { fileName, fileText } = request.body;
      if ([...jobs.values()].some((j) => j.state === 'running'))
        return page(reply, 409, 'import', { title: 'Import', formats, fileName, error: 'Another import is running; wait for it to finish and try again.' });
      const job: ImportJob = {
        id: randomToken(24),
        staffId: user(request).staffId,
        fileName,
        state: 'running',
        progress: null,
        result: null,
        problems: [],
        omitted: 0,
        message: null,
      };
      jobs.set(job.id, job);
      for (const old of [...jobs.keys()].slice(0, Math.max(0, jobs.size - KEPT_JOBS))) jobs.delete(old);
      const work = importText(store, actor(request), { fileName, content: fileText }, now(), (p) => {
        job.progress = p;
      })
        .then((result) => {
          job.state = 'done';
          job.result = result;
        })
        .catch((error: unknown) => {
          if (error instanceof ImportRefused) {
            job.state = 'refused';
            job.problems = error.problems;
            job.omitted = error.omitted;
          } else {
            job.state = 'failed';
            job.message = error instanceof AppError ? error.message : `the import failed on our side (request ${request.id}); nothing was written`;
            if (!(error instanceof AppError)) request.log.error({ err: error }, 'console import failed');
          }
        })
        .finally(() => running.delete(work));
      running.add(work);
      return reply.redirect(`${CONSOLE_PREFIX}/import/${job.id}`, 303);
    });

    app.get('/import/:jobId', { schema: { params: ImportJobParams } }, async (request, reply) => {
      const job = jobs.get(request.params.jobId);
      if (!job || job.staffId !== user(request).staffId) throw notFound('import (it may have been started by someone else, or forgotten after a restart)');
      return page(reply, 200, 'import-job', { title: `Import of ${job.fileName}`, job });
    });
  },
};
