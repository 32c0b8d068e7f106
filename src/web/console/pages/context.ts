import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../../config.ts';
import type { Actor } from '../../../domain/audit.ts';
import type { Permission, SessionLimits } from '../../../domain/staff.ts';
import type { Clock } from '../../../domain/time.ts';
import type { BucketStore } from '../../../http/rate-limit.ts';
import type { BackupService } from '../../../services/backup-runs.service.ts';
import type { ConsoleUser } from '../../../services/console-sessions.service.ts';
import type { Store } from '../../../store/db.ts';
import type { PageRenderer, WebForms } from '../../foundation.ts';
import type { ConsoleViews } from '../views.ts';

/** A link of the navigation bar, shown to the roles whose permissions include `permission`. */
export interface NavLink {
  href: string;
  label: string;
  permission: Permission;
}

/** What every page module is given: the app's dependencies, the renderer and who is asking. */
export interface ConsolePageContext {
  config: Config;
  store: Store;
  /** The rate-limit buckets of the app (in process, or Redis). */
  buckets: BucketStore;
  /** Scheduled and requested backups (the Backups page). */
  backups: BackupService;
  now: Clock;
  sessionLimits: SessionLimits;
  page: PageRenderer<ConsoleViews>;
  /** One-time form keys and the one-time displays of the page after a POST (foundation.ts). */
  forms: WebForms;
  /** The signed-in staff member; only for routes that are not public (the permission hook ran). */
  user(request: FastifyRequest): ConsoleUser;
  /** The audit actor of a write made from the console by the signed-in staff member. */
  actor(request: FastifyRequest): Actor;
}

/**
 * One resource's pages: its routes (each must be in CONSOLE_ROUTES) and its navigation links. The
 * console plugin registers every module of CONSOLE_PAGES (pages/index.ts) under its hooks.
 */
export interface ConsolePage {
  nav: readonly NavLink[];
  routes: FastifyPluginAsyncTypebox<ConsolePageContext>;
}
