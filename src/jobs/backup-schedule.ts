import { Cron } from 'croner';
import type { BackupLog, BackupService } from '../services/backup-runs.service.ts';

/**
 * BACKUP_SCHEDULE in `serve` (roles worker and all): croner fires the cron expression, each tick
 * asks for one run. Every worker may hold a schedule; the lease lets one of them back up and the
 * others hear "busy" and skip the tick. A tick that comes while this process's own run still goes
 * is skipped by croner (`protect`), so runs never pile up behind a slow one.
 */
export class BackupSchedule {
  private cron: Cron | null = null;
  private current: Promise<unknown> | null = null;

  constructor(
    private readonly backups: BackupService,
    private readonly schedule: string,
    private readonly log: BackupLog,
    /** Called after each tick's run with what it came to (tests wait on it). */
    private readonly onRun: (outcome: 'succeeded' | 'failed' | 'busy') => void = () => {},
  ) {}

  start(): void {
    this.cron = new Cron(this.schedule, { protect: true, name: 'backup', timezone: 'Etc/UTC' }, async () => {
      const run = this.backups.run('schedule').catch((error: Error) => {
        // The run records and logs its own failures; this is one before it began (the database unreachable).
        this.log.error({ err: error }, `backup failed: could not start it: ${error.message}`);
        return 'failed' as const;
      });
      this.current = run;
      try {
        const outcome = await run;
        if (outcome === 'busy') this.log.info({}, 'scheduled backup skipped: another backup is running');
        this.onRun(outcome);
      } finally {
        this.current = null;
      }
    });
  }

  /** No more ticks; the run in progress is aborted by the service's stop() and awaited here. */
  async stop(): Promise<void> {
    this.cron?.stop();
    await this.current;
  }
}
