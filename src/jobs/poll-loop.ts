/**
 * Runs `round` every `intervalMs` (measured from the end of the previous round, so rounds never
 * overlap) until stopped; `stop()` waits for the round in progress (graceful shutdown). Shared by
 * the background workers, which keep their state in the database and only need a heartbeat.
 */
export class PollLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = true;

  constructor(
    private readonly round: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(intervalMs: number): void {
    this.stopped = false;
    const tick = async () => {
      if (this.stopped) return;
      this.running = this.round().catch(this.onError);
      await this.running;
      this.running = null;
      if (!this.stopped) this.timer = setTimeout(tick, intervalMs);
    };
    this.timer = setTimeout(tick, intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
