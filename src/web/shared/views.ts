import type { FastifyReply } from 'fastify';

/**
 * Typed pages (issue 30, rule 3): every view of a front end is registered by name with the type of
 * its model, and `page(reply, status, name, model)` accepts only a registered name with a model of
 * that type. A model is built by a presenter (`console/present.ts`, `manager/present.ts`,
 * `shared/present.ts`): money, times and ids are text by then, so a template only places them. The
 * registry also says which template renders the view (one folder of shared partials and views,
 * `shared/`, serves both front ends). A template reads its model and the page frame, nothing else:
 * `page()` passes no other fields (test/unit/web-presenters.test.ts).
 */

/**
 * Markup a presenter made from values only (a `<time>` element from a number): printed unescaped
 * (`<%~ %>`). Nothing else may be: a plain string is not an `Html`, so a caller's text cannot
 * become markup by accident.
 */
export type Html = string & { readonly __html: true };

/** What every page model has: the page's title (the layout's `<title>`). */
export interface PageModel {
  title: string;
}

/** A registered view: its template (under src/web/, no extension) and, as a type only, its model. */
export interface ViewSpec<M extends PageModel> {
  template: string;
  /** Never set: carries the model's type to `ModelsOf`. */
  readonly model?: M;
}

export const typedView = <M extends PageModel>(template: string): ViewSpec<M> => ({ template });

/** A registry's view names → their model types. */
export type ModelsOf<R> = { [K in keyof R]: R[K] extends ViewSpec<infer M> ? M : never };

/** A registry of views as `installWebFrontEnd` takes it. */
export type ViewRegistry<V> = { [K in keyof V]: ViewSpec<V[K] & PageModel> };

/**
 * Renders a registered view inside the shared layout (src/web/shared/partials/layout.eta) with the
 * page frame (`Frame`) besides its model.
 */
export type PageRenderer<V> = <K extends keyof V & string>(reply: FastifyReply, status: number, view: K, model: V[K]) => FastifyReply | Promise<FastifyReply>;

/** A link of the navigation bar as the layout shows it. */
export interface NavItem {
  href: string;
  label: string;
  /** The page being shown (`aria-current="page"`). */
  current: boolean;
}

/**
 * The layout's parts that differ between the front ends (shared/partials/layout.eta): the name,
 * the assets, the navigation and the signed-in user's line. Built by `consoleChrome` and
 * `managerChrome`.
 */
export interface Chrome {
  /** "Stockist console": the brand link's text and the end of every `<title>`. */
  product: string;
  /** The front end's first page (`/console`). */
  home: string;
  /** The link back to it that an error page offers ("Back to the dashboard"). */
  homeLink: string;
  /** Where its assets are served (`/console/assets`). */
  assets: string;
  stylesheet: string;
  scripts: readonly string[];
  /** The navigation landmark's name. */
  navLabel: string;
  nav: readonly NavItem[];
  /** The environment badge (business manager): which keys this server's pages are about. */
  environment: { name: string; text: string } | null;
  /** The signed-in user's line with its links and the sign-out form; null when nobody is signed in. */
  who: { text: string; links: readonly { href: string; label: string }[]; signOut: string } | null;
}

/** The one-time message at the top of a page (after a POST → 303 → GET): shared/partials/flash.eta. */
export interface Notice {
  text: string;
  kind?: 'done' | 'error';
}

/** What every view gets besides its model: the layout's parts, the CSRF token, the one-time form key and notice. */
export interface Frame {
  chrome: Chrome;
  csrf: string | null;
  formKey: string;
  notice: Notice | null;
}

/** An error page, the same in both front ends (shared/views/error.eta; its link leads to `chrome.homeLink`). */
export interface ErrorView extends PageModel {
  message: string;
}
