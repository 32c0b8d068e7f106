import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';

/** Debian's Chromium, driven by playwright-core (no browser download). */
const CHROMIUM = '/usr/bin/chromium';
/** Screenshots go here (ignored by git). */
export const OUTPUT = path.resolve(import.meta.dirname, '../../test-output');

/** The skip reason of a browser suite where Chromium is absent (false where it is present). */
export const chromiumSkip = (what: string) =>
  fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium; .ci/run does) to run ${what}`;

/**
 * A headless page that may only load what `origin` serves (and `data:` URLs): anything else is
 * refused and listed in `foreign`, so a test can assert that a page needs no CDN. Console errors
 * are collected in `consoleErrors`. The browser closes with the test.
 */
export async function localOnlyPage(t: TestContext, origin: string, viewport: { width: number; height: number }) {
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
  const page = await browser.newPage({ viewport });
  const foreign: string[] = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('data:')) return route.continue();
    foreign.push(url);
    return route.abort();
  });
  const consoleErrors: string[] = [];
  page.on('console', (message) => void (message.type() === 'error' && consoleErrors.push(message.text())));
  return { page, foreign, consoleErrors };
}
