import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../../config.ts';
import type { Actor } from '../../../domain/audit.ts';
import type { ManagerPermission } from '../../../domain/merchant-users.ts';
import type { SessionLimits } from '../../../domain/staff.ts';
import type { Clock } from '../../../domain/time.ts';
import type { HostResolver } from '../../../domain/webhook-url.ts';
import type { BucketStore } from '../../../http/rate-limit.ts';
import type { ManagerUser } from '../../../services/manager-sessions.service.ts';
import type { StatementBuilds } from '../../../services/statement-builds.ts';
import type { Db, Store } from '../../../store/db.ts';
import type { MerchantScope } from '../../../store/tenancy.ts';
import type { PageRenderer, WebForms } from '../../foundation.ts';
import type { ManagerViews } from '../views.ts';

/** A link of the navigation bar, shown to the roles whose permissions include `permission`. */
export interface ManagerNavLink {
  href: string;
  label: string;
  permission: ManagerPermission;
}

/** What every page module is given: the app's dependencies, the renderer and who is asking. */
export interface ManagerPageContext {
  config: Config;
  store: Store;
  buckets: BucketStore;
  now: Clock;
  sessionLimits: SessionLimits;
  page: PageRenderer<ManagerViews>;
  /** One-time form keys and the one-time displays of the page after a POST (foundation.ts). */
  forms: WebForms;
  /** DNS for webhook URL checks (tests map names to addresses). */
  resolveHost?: HostResolver;
  /** Where statements are made: the PDF worker pool and the per-merchant limit. */
  statements: StatementBuilds;
  /** The public origin (PUBLIC_BASE_URL, else the request's own). */
  origin(request: FastifyRequest): string;
  /** The signed-in user; only for routes that are not public (the permission hook ran). */
  user(request: FastifyRequest): ManagerUser;
  /** The signed-in user's merchant, as the scope services take (made once per request). */
  merchant(request: FastifyRequest): MerchantScope<Db>;
  /** The audit actor of a write made by the signed-in user. */
  actor(request: FastifyRequest): Actor;
}

/** One resource's pages: routes (each in MANAGER_ROUTES) and navigation links. */
export interface ManagerPage {
  nav: readonly ManagerNavLink[];
  routes: FastifyPluginAsyncTypebox<ManagerPageContext>;
}
