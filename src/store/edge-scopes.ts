import type { Handle } from './db.ts';
import { forMerchant, type MerchantScope } from './scope-mint.ts';

/*
 * The edge's scopes (Structure II, item 1): where a request or a command first knows its merchant,
 * one function each makes the merchant's scope. dependency-cruiser's `edge-scopes-only-at-the-edge`
 * (.dependency-cruiser.cjs) lets only those places import this module (http/auth.ts, the manager's
 * plugin, the operator's routes and pages, the CLI and the demo seed); services, jobs and
 * presenters get a scope handed to them or from a store lookup (`owner`), never make one.
 */

/** The API: the merchant a verified access token belongs to (http/auth.ts's token hook). */
export const scopeOfToken = <H extends Handle>(handle: H, principal: { readonly merchantId: number }): MerchantScope<H> =>
  forMerchant(handle, principal.merchantId);

/** The business manager: the signed-in user's merchant (web/manager/manager.plugin.ts). */
export const scopeOfSession = <H extends Handle>(handle: H, user: { readonly merchantId: number }): MerchantScope<H> => forMerchant(handle, user.merchantId);

/** The operator (console pages, `/admin/v1` routes): the merchant a route names by id, parsed from the request. */
export const scopeForOperator = <H extends Handle>(handle: H, merchantId: number): MerchantScope<H> => forMerchant(handle, merchantId);

/** A command (the CLI, the demo seed): the merchant it names. */
export const scopeForCommand = <H extends Handle>(handle: H, merchantId: number): MerchantScope<H> => forMerchant(handle, merchantId);
