#!/usr/bin/env -S node --max-semi-space-size=4
// The flag caps V8's young generation at 2 × 4 MB (default 2 × 16 MB): the server's peak RSS under
// the benchmark drops by ~25 MB with no measurable CPU cost (docs/performance.md, "Memory"). A flag on
// this line applies to `npx stockist` and to running the file itself; `npm start`, the deployment
// guide and the benchmark pass the same flags to `node` (the benchmark reads them from this line).
// The `stockist` command. It runs the compiled JavaScript bundle in dist/ (built from src/ by
// `npm install`'s prepare step, or `npm run build`), so start-up needs no TypeScript loader.
// STOCKIST_SOURCES=1 runs the TypeScript sources through tsx instead (a development dependency):
// the tests and `npm run dev` do, so an edit runs without a build.
// Before anything native loads, the Node version: older than 22 runs this again on the Node.js 24
// that scripts/use-node-24.sh fetched, or stops with one line naming the fix (./node-runtime.js).
// Until then only node: built-ins are imported (node-runtime.js too).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runOnSupportedNode } from './node-runtime.js';

await runOnSupportedNode();

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

if (process.env.STOCKIST_SOURCES === '1') {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import(pathToFileURL(path.join(root, 'src/cli/main.ts')).href);
  await main(process.argv);
} else {
  const entry = path.join(root, 'dist/stockist.js');
  if (!fs.existsSync(entry)) {
    process.stderr.write(
      `stockist: the compiled program is missing (${entry}).\n` +
        `Build it with \`npm install\` (or \`npm run build\`) in ${root}; building needs the development dependencies (TypeScript).\n`,
    );
    process.exit(1);
  }
  warnIfStale();
  const { main } = await import(pathToFileURL(entry).href);
  await main(process.argv);
}

/** A checkout with sources newer than the build runs the old build: say so (a few ms of stat calls). */
function warnIfStale() {
  const src = path.join(root, 'src');
  let built;
  try {
    built = fs.statSync(path.join(root, 'dist/.build-stamp')).mtimeMs;
  } catch {
    return;
  }
  if (!fs.existsSync(src)) return;
  const newest = (dir) =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce((max, e) => {
      const p = path.join(dir, e.name);
      return Math.max(max, e.isDirectory() ? newest(p) : e.name.endsWith('.ts') ? fs.statSync(p).mtimeMs : 0);
    }, 0);
  if (newest(src) > built)
    process.stderr.write('stockist: warning: src/ has changed since dist/ was built; run `npm run build` (this run uses the old build)\n');
}
