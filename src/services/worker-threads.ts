import fs from 'node:fs';
import path from 'node:path';
import { Piscina } from 'piscina';

/** Whether this process runs the TypeScript sources (tests, tsx) rather than the bundle in dist/. */
const fromSources = import.meta.url.endsWith('.ts');

/**
 * The module a worker thread runs: `source`, the TypeScript file in `sourceDir` (the caller's
 * `import.meta.dirname`), when running the sources; else its bundle `bundle`, found beside
 * dist/stockist.js (scripts/build.mjs names each worker's entry) by walking up from here.
 */
export function workerModule(sourceDir: string, source: string, bundle: string): string {
  if (fromSources) return path.join(sourceDir, source);
  const here = import.meta.dirname;
  for (let dir = here; ; dir = path.dirname(dir)) {
    const built = path.join(dir, bundle);
    if (fs.existsSync(built)) return built;
    if (path.dirname(dir) === dir) throw new Error(`${bundle} not found above ${here}: run npm run build`);
  }
}

/**
 * A pool whose threads start with the first task, not with the app, and end after `idleTimeout`
 * without one. Threads get not the server's flags (the test runner's, V8's) but the TypeScript
 * loader when running the sources.
 */
export function onDemandPool<Task, Result>(
  options: { filename: string; maxThreads: number; idleTimeout: number } & Pick<
    ConstructorParameters<typeof Piscina>[0] & object,
    'niceIncrement' | 'resourceLimits'
  >,
): Piscina<Task, Result> {
  return new Piscina<Task, Result>({
    minThreads: 0,
    execArgv: fromSources ? ['--import', import.meta.resolve('tsx')] : [],
    ...options,
  });
}
