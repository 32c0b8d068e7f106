import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { Page } from 'playwright-core';

/** Debian's Chromium, driven by playwright-core (no browser download). */
const CHROMIUM = '/usr/bin/chromium';
/** Screenshots go here (ignored by git). */
const OUTPUT = path.resolve(import.meta.dirname, '../../test-output');

/** The skip reason of a browser suite where Chromium is absent (false where it is present). */
export const chromiumSkip = (what: string) =>
  fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium; .ci/run does) to run ${what}`;

/**
 * A headless page that may only load what `origin` serves (and `data:` URLs): anything else is
 * refused and listed in `foreign`, so a test can assert that a page needs no CDN (`alsoAllowed`:
 * origins a test serves itself, such as another site's page for a CSRF check). Console errors
 * are collected in `consoleErrors` (of every tab `newTab` opens too). The browser closes with the test. `timezoneId` sets the
 * browser's zone (`Asia/Tokyo`), for pages that show times in the viewer's zone; `locale` its language (`de-DE`), for numbers.
 */
export async function localOnlyPage(
  t: TestContext,
  origin: string,
  viewport: { width: number; height: number },
  alsoAllowed: string[] = [],
  { timezoneId, locale }: { timezoneId?: string; locale?: string } = {},
) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.after(() => browser.close());
  const context = await browser.newContext({ viewport, ...(timezoneId ? { timezoneId } : {}), ...(locale ? { locale } : {}) });
  const foreign: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('data:') || alsoAllowed.some((o) => url.startsWith(o))) return route.continue();
    foreign.push(url);
    return route.abort();
  });
  const consoleErrors: string[] = [];
  const tab = async () => {
    const opened = await context.newPage();
    opened.on('console', (message) => void (message.type() === 'error' && consoleErrors.push(message.text())));
    return opened;
  };
  const page = await tab();
  /** Another tab of the same browser (the same cookies, the same local-only rule), as a second tab on one form. */
  return { page, foreign, consoleErrors, newTab: tab };
}

/**
 * Runs axe-core (from node_modules) on the page as it stands and fails on any serious or critical
 * violation, listing each with the elements it names. The console's CSP forbids inline script, so
 * `addScriptTag({ content })` would be refused; the source goes in through the DevTools protocol
 * (`page.evaluate` of a string), which the page's CSP does not govern.
 */
export async function checkAccessibility(page: Page): Promise<void> {
  axeSource ??= fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axeSource);
  const violations = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) })))`,
  )) as { id: string; impact: string | null; help: string; nodes: string[] }[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    serious.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.join(', ')})`),
    [],
    `axe-core: serious or critical accessibility violations on ${page.url()}`,
  );
}
let axeSource: string | undefined;

/** The widths every page is looked at: a desktop and a phone. */
const SCREENSHOT_WIDTHS = [1280, 390] as const;

/**
 * Whether `screenshot` writes its pictures: yes on a developer's machine, where they are looked at;
 * not under CI=true, where nobody can (a third of a browser test's time was its screenshots).
 * TEST_SCREENSHOTS=1 or 0 decides either way. The pages are checked the same with or without them.
 */
const TAKE_SCREENSHOTS = process.env.TEST_SCREENSHOTS ? process.env.TEST_SCREENSHOTS !== '0' : process.env.CI !== 'true';

/**
 * Full-page screenshots at each of SCREENSHOT_WIDTHS, written to test-output/<dir>/<name>-<width>.png;
 * the viewport is put back afterwards. Returns the files written (none when TAKE_SCREENSHOTS is off).
 * `fullPage: false` takes what the viewport shows (the API reference is tens of thousands of pixels
 * tall: its top is what a reader sees).
 */
export async function screenshot(page: Page, dir: string, name: string, { fullPage = true }: { fullPage?: boolean } = {}): Promise<string[]> {
  if (!TAKE_SCREENSHOTS) return [];
  const original = page.viewportSize();
  const folder = path.join(OUTPUT, dir);
  fs.mkdirSync(folder, { recursive: true });
  const files: string[] = [];
  for (const width of SCREENSHOT_WIDTHS) {
    await page.setViewportSize({ width, height: original?.height ?? 900 });
    const file = path.join(folder, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage });
    files.push(file);
  }
  if (original) await page.setViewportSize(original);
  return files;
}

/** Signs `page` in to the console at `origin` through its sign-in form, and waits for the dashboard. */
export async function consoleSignIn(page: Page, origin: string, email: string, password: string): Promise<void> {
  await page.goto(`${origin}/console/sign-in`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await Promise.all([page.waitForURL(`${origin}/console`), page.click('main button[type=submit]')]);
}
