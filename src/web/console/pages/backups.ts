import { Type } from 'typebox';
import { CsrfForm } from '../../../schemas/console.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentBackups, runningBy } from '../present-backups.ts';
import type { ConsolePage } from './context.ts';

/** An archive's name as the URL carries it; the service serves only a name its listing holds. */
const ArchiveParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 120 }) });

/**
 * Backups (SPEC §17; owner only, backups:manage): the archives and recent runs, "Back up now"
 * (asks first; one backup at a time across every process — while one runs the button is disabled
 * and a request sent anyway is refused with a notice), and the download of an archive, audited.
 */
export const backupsPage: ConsolePage = {
  nav: [{ href: `${CONSOLE_PREFIX}/backups`, label: 'Backups', permission: 'backups:manage' }],
  routes: async (app, { config, backups, page, forms, user, actor }) => {
    app.get('/backups', async (_request, reply) => {
      const [running, archives, runs] = await Promise.all([backups.running(), backups.archives(), backups.recentRuns()]);
      return page(
        reply,
        200,
        'backups',
        presentBackups({
          where: backups.target.where,
          schedule: config.backupSchedule,
          keep: config.backupKeep,
          running,
          archives,
          runs,
        }),
      );
    });

    app.post('/backups', { schema: { body: CsrfForm } }, async (request, reply) => {
      const started = await backups.start('console', { who: user(request).email, actor: actor(request) });
      const text = started.started
        ? 'Backup started. It is listed here once it has been verified; reload the page to follow it.'
        : `Not started: a backup is running already${started.running ? ` (asked by ${runningBy(started.running)})` : ''}. Try again when it has finished.`;
      await forms.flash(request, 'notice', { text, kind: started.started ? 'done' : 'error' });
      return reply.redirect(`${CONSOLE_PREFIX}/backups`, 303);
    });

    app.get('/backups/:name', { schema: { params: ArchiveParams } }, async (request, reply) => {
      const archive = await backups.download(actor(request), request.params.name);
      return reply
        .type('application/x-tar')
        .header('Content-Length', archive.bytes)
        .header('Content-Disposition', `attachment; filename="${archive.name}"`)
        .header('Cache-Control', 'no-store')
        .send(archive.stream);
    });
  },
};
