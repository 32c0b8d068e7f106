import type { FastifyBaseLogger } from 'fastify';
import { systemActor } from '../domain/audit.ts';
import { AppError } from '../domain/errors.ts';
import { deliverSplitOrder, shipSplitOrder, splitOrdersDue } from '../services/fulfillment.service.ts';
import type { Store } from '../store/db.ts';
import { PollLoop } from './poll-loop.ts';

/** Its ships and deliveries are audited like an operator's, as this job. */
const SHIPPER = systemActor('sandbox-shipper');

/**
 * Sandbox only (SANDBOX_AUTO_SHIP_SECONDS): ships split orders that have waited that long and
 * delivers them as long again after shipping, so merchants can see refund-after-shipment refused
 * without an operator. Config refuses the variable in production.
 */
export class SandboxShipper {
  private readonly loop = new PollLoop(
    () => this.runOnce(),
    (error) => this.log?.error({ err: error }, 'sandbox shipper round failed'),
  );

  constructor(
    private readonly store: Store,
    private readonly afterSeconds: number,
    private readonly log?: Pick<FastifyBaseLogger, 'error'>,
  ) {}

  async runOnce(now = Date.now()): Promise<{ shipped: number; delivered: number }> {
    const { db } = this.store;
    const due = now - this.afterSeconds * 1000;
    const { toShip, toDeliver } = await splitOrdersDue(db, due, 100);
    let shipped = 0;
    let delivered = 0;
    for (const id of toShip) {
      // A pending refund blocks shipping (40903); the next round tries again.
      if (await this.attempt(() => shipSplitOrder(db, SHIPPER, id, { carrier: 'SANDBOX', trackingCode: `SBX${id}` }, now))) shipped++;
    }
    for (const id of toDeliver) if (await this.attempt(() => deliverSplitOrder(db, SHIPPER, id, now))) delivered++;
    return { shipped, delivered };
  }

  private async attempt(fn: () => Promise<unknown>): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (error) {
      if (!(error instanceof AppError)) this.log?.error({ err: error }, 'sandbox shipper failed');
      return false;
    }
  }

  start(intervalMs = 1000): void {
    this.loop.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
