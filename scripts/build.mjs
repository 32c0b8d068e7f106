#!/usr/bin/env node
// Builds dist/ from src/: one ES module bundle per entry (bin/stockist.js loads dist/stockist.js),
// split into chunks at the CLI's lazy imports, with source maps. The dependencies are bundled too,
// except native modules and those that start worker threads from files of their own (below):
// loading one file instead of ~1,000 module files is most of the start-up time saved
// (docs/decisions.md, "Compiled runtime"). Type checking is `npm run typecheck` (tsc), not this.
// Run by `npm install` / `npm ci` (the prepare script) and `npm run build`; with --if-stale (the
// test runner, `npm run chaos`, the benchmarks) only when src/ is newer than the last build.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { buildIsStale } from './build-state.mjs';
import { runOnSupportedNode } from '../bin/node-runtime.js';
import { buildSdk } from './build-sdk.mjs';

// `npm install`'s prepare step runs on the `node` on PATH, possibly an old one: build on the fetched
// Node.js 24 then, or say what to do in one line (bin/node-runtime.js).
await runOnSupportedNode();

const root = path.resolve(import.meta.dirname, '..');
if (process.argv.includes('--if-stale') && !buildIsStale(root)) process.exit(0);
const dist = path.join(root, 'dist');
const stamp = path.join(dist, '.build-stamp');

/** Loaded from node_modules at run time: native addons, worker-thread loggers, optional natives. */
// pdfkit reads its font metrics from its own package folder at run time (the statement PDF, SPEC §15);
// piscina starts its threads from a file of its own (the statement PDF's worker pool, issue 41).
// fontkit is pdfkit's own, loaded once for both (the statement's faces are fontkit fonts).
export const EXTERNAL = ['better-sqlite3', 'pg-native', 'pino', 'pino-pretty', 'thread-stream', '@node-rs/argon2', 'pdfkit', 'fontkit', 'piscina'];

let esbuild;
try {
  esbuild = createRequire(import.meta.url)('esbuild');
} catch {
  // A production install (`npm ci --omit=dev`) has no bundler: it must ship a built dist/.
  if (fs.existsSync(stamp)) {
    console.log('build: esbuild is not installed; using the existing dist/');
    process.exit(0);
  }
  console.error('build: dist/ is missing and esbuild is not installed: run `npm ci` with the development dependencies, or copy a built dist/ here');
  process.exit(1);
}

const packageName = (specifier) => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]);

const started = Date.now();
fs.rmSync(dist, { recursive: true, force: true });
try {
  await esbuild.build({
    absWorkingDir: root,
    // The statement PDF's renderer and the password-strength estimate run on worker threads, which
    // load them as files of their own (src/services/statement-builds.ts finds dist/statement-worker.js,
    // src/services/password-checks.ts dist/password-worker.js).
    entryPoints: {
      stockist: 'src/cli/main.ts',
      'statement-worker': 'src/services/statement.worker.ts',
      'password-worker': 'src/services/password-strength.worker.ts',
    },
    outdir: dist,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    sourcemap: 'linked',
    sourcesContent: false,
    // Bundled CommonJS packages call require() for Node built-ins and the external packages.
    banner: { js: "import { createRequire as __stockistCreateRequire } from 'node:module'; const require = __stockistCreateRequire(import.meta.url);" },
    plugins: [
      {
        name: 'stockist-externals',
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, (args) => (EXTERNAL.includes(packageName(args.path)) ? { external: true } : undefined));
        },
      },
    ],
    logLevel: 'warning',
  });
} catch {
  console.error('build: esbuild failed; dist/ was not written');
  process.exit(1);
}
// V8 holds each loaded file's source text for the process's life, in one byte a character while it
// is all Latin-1 and in two once a single character is not. esbuild escapes what is outside ASCII in
// code (charset 'ascii'), but not in comments: one em dash in a comment doubled the server chunk's
// 2 MB of held source. Escaping those as \uXXXX changes no code — in a comment it is text, and in a
// literal esbuild left as written (a template's raw text is the one case) it would be read the same —
// and saves ~2 MB of every server's memory (docs/performance.md, "Memory on Node 24").
const escapeNonAscii = (file) => {
  const text = fs.readFileSync(file, 'utf8');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is every character past ASCII
  const beyondAscii = /[^\x00-\x7f]/g;
  if (beyondAscii.test(text))
    fs.writeFileSync(
      file,
      text.replace(beyondAscii, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    );
};
for (const name of fs.readdirSync(path.join(dist, 'chunks'))) if (name.endsWith('.js')) escapeNonAscii(path.join(dist, 'chunks', name));
for (const name of ['stockist.js', 'statement-worker.js', 'password-worker.js']) escapeNonAscii(path.join(dist, name));
// The web front ends' templates and stylesheets are read at run time (src/web/resources.ts): beside the bundle.
const copyWebFiles = (from, to) => {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    if (entry.isDirectory()) copyWebFiles(path.join(from, entry.name), path.join(to, entry.name));
    else if (/\.(eta|css|js)$/.test(entry.name)) {
      fs.mkdirSync(to, { recursive: true });
      fs.copyFileSync(path.join(from, entry.name), path.join(to, entry.name));
    }
  }
};
copyWebFiles(path.join(root, 'src/web'), path.join(dist, 'web'));
// The typed client as an npm package, served at /sdk/ (scripts/build-sdk.mjs).
try {
  await buildSdk(root, esbuild, path.join(dist, 'sdk'));
} catch (error) {
  console.error(`build: the client package (dist/sdk/) failed: ${error.message}`);
  process.exit(1);
}
fs.writeFileSync(stamp, `${new Date().toISOString()}\n`);
console.log(`build: src/ bundled into dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
