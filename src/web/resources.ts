import fs from 'node:fs';
import path from 'node:path';

/** The folder holding package.json: the checkout or installed package, whichever file this runs from. */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/**
 * Templates and stylesheets of the web front ends: read from `src/web/` when running the
 * TypeScript sources, from `dist/web/` (copied there by scripts/build.mjs) when running the bundle,
 * so a deployment that ships only dist/ has them.
 */
export function webResource(...parts: string[]): string {
  const fromSources = import.meta.url.endsWith('.ts');
  return path.join(packageRoot(import.meta.dirname), fromSources ? 'src/web' : 'dist/web', ...parts);
}
