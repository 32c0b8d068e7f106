import type { FastifyReply, FastifyRequest } from 'fastify';
import { UTF8_BOM } from '../../../domain/csv.ts';
import { AppError, notFound } from '../../../domain/errors.ts';
import { ImportRefused, type ImportProblem } from '../../../domain/import-format.ts';
import { randomToken } from '../../../domain/secrets.ts';
import { staffImportRights } from '../../../domain/staff.ts';
import { CSV_TEMPLATES } from '../../../domain/import-format.ts';
import { CsrfForm, ImportForm, ImportJobParams, ImportPreviewParams, ImportTemplateQuery } from '../../../schemas/console.ts';
import { importText, previewText, type ImportPreview } from '../../../services/import.service.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentImport, presentImportJob, presentImportPreview, type ImportJobInput } from '../present-catalog.ts';
import type { ConsolePage } from './context.ts';

/** An upload being imported, or imported: what its page shows while it runs and after. */
interface ImportJob extends ImportJobInput {
  /** Only the staff member who started it sees it. */
  staffId: number;
  problems: ImportProblem[];
}

/** An upload after its dry run, waiting to be applied. */
interface Preview {
  id: string;
  /** Only the staff member who uploaded it sees and applies it. */
  staffId: number;
  fileName: string;
  fileText: string;
  result: ImportPreview;
}

/** A template cell as CSV writes it: quoted when it holds a comma, a quote or a line break. */
const csvCell = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

/** Finished jobs kept for their pages (the newest); older ones answer 404. */
const KEPT_JOBS = 50;

/**
 * Import upload (import:run): a CSV of products or stocks, or a JSON catalogue document, imported
 * like `stockist import` — all or nothing, every bad row listed with its line. The import runs in
 * the background of this process; its page shows the progress (htmx polls it) and then the result.
 * One import at a time per process: it holds the database's write transaction until it is done.
 * Size limit and the reasons: docs/decisions.md, "Console import uploads". An import writes only
 * the kinds of row the signed-in role may write by hand (domain/staff.ts, staffImportRights),
 * checked row by row in the dry run and again, with the role as it is then, when it runs.
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

    /** Uploads previewed and not yet applied or forgotten (the newest KEPT_JOBS), by id. */
    const previews = new Map<string, Preview>();
    const busy = () => [...jobs.values()].some((j) => j.state === 'running') || previewing;
    let previewing = false;
    const BUSY = 'Another import is running; wait for it to finish and try again.';

    app.get('/import', async (request, reply) => page(reply, 200, 'import', presentImport(user(request).role)));

    // A CSV template: the kind's columns and one example row (domain/import-format.ts).
    app.get('/import/template.csv', { schema: { querystring: ImportTemplateQuery } }, async (request, reply) => {
      const kind = request.query.kind ?? 'products';
      const { columns, example } = CSV_TEMPLATES[kind];
      const row = columns.map((c) => csvCell((example as Record<string, string>)[c] ?? ''));
      return reply
        .type('text/csv; charset=utf-8')
        .header('Content-Disposition', `attachment; filename="stockist-${kind}-template.csv"`)
        .send(`${UTF8_BOM}${columns.join(',')}\r\n${row.join(',')}\r\n`);
    });

    // A dry run: the upload is read and imported inside a transaction that is rolled back; the
    // page it leads to shows what would change. The upload is kept (this process, this staff
    // member) until it is applied or forgotten.
    app.post('/import/preview', { schema: { body: ImportForm } }, async (request, reply) => {
      const { fileName, fileText } = request.body;
      if (busy()) return page(reply, 409, 'import', presentImport(user(request).role, { fileName, error: BUSY }));
      previewing = true;
      let result: ImportPreview;
      try {
        result = await previewText(store, staffImportRights(user(request).role), { fileName, content: fileText }, now());
      } finally {
        previewing = false;
      }
      const preview: Preview = { id: randomToken(24), staffId: user(request).staffId, fileName, fileText, result };
      previews.set(preview.id, preview);
      for (const old of [...previews.keys()].slice(0, Math.max(0, previews.size - KEPT_JOBS))) previews.delete(old);
      return reply.redirect(`${CONSOLE_PREFIX}/import/preview/${preview.id}`, 303);
    });

    const previewOf = (request: FastifyRequest, previewId: string) => {
      const preview = previews.get(previewId);
      if (!preview || preview.staffId !== user(request).staffId)
        throw notFound('import preview (it may have been applied already, or forgotten after a restart)');
      return preview;
    };

    app.get('/import/preview/:previewId', { schema: { params: ImportPreviewParams } }, async (request, reply) => {
      const preview = previewOf(request, request.params.previewId);
      return page(reply, 200, 'import-preview', presentImportPreview(preview));
    });

    // Applying imports the same upload for real (as POST /import); the preview is used up.
    app.post('/import/preview/:previewId/apply', { schema: { params: ImportPreviewParams, body: CsrfForm } }, async (request, reply) => {
      const preview = previewOf(request, request.params.previewId);
      if (busy()) return page(reply, 409, 'import-preview', presentImportPreview(preview, BUSY));
      previews.delete(preview.id);
      return startImport(request, preview.fileName, preview.fileText, reply);
    });

    app.post('/import', { schema: { body: ImportForm } }, async (request, reply) => {
      const { fileName, fileText } = request.body;
      if (busy()) return page(reply, 409, 'import', presentImport(user(request).role, { fileName, error: BUSY }));
      return startImport(request, fileName, fileText, reply);
    });

    /** Starts an import in the background and answers 303 to its page. */
    const startImport = (request: FastifyRequest, fileName: string, fileText: string, reply: FastifyReply) => {
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
      const work = importText(store, actor(request), staffImportRights(user(request).role), { fileName, content: fileText }, now(), (p) => {
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
    };

    app.get('/import/:jobId', { schema: { params: ImportJobParams } }, async (request, reply) => {
      const job = jobs.get(request.params.jobId);
      if (!job || job.staffId !== user(request).staffId) throw notFound('import (it may have been started by someone else, or forgotten after a restart)');
      return page(reply, 200, 'import-job', presentImportJob(job));
    });
  },
};
