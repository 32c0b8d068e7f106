// Whether dist/ matches src/: the build writes dist/.build-stamp after a successful tsc run, so a
// source file newer than the stamp means the build is stale (bin/stockist.js warns the same way).
import fs from 'node:fs';
import path from 'node:path';

export function buildIsStale(root) {
  let built;
  try {
    built = fs.statSync(path.join(root, 'dist/.build-stamp')).mtimeMs;
  } catch {
    return true;
  }
  const newest = (dir) =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce((max, e) => {
      const p = path.join(dir, e.name);
      return Math.max(max, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
    }, 0);
  return (
    Math.max(
      newest(path.join(root, 'src')),
      // The client package served at /sdk/ (scripts/build-sdk.mjs).
      newest(path.join(root, 'clients/typescript')),
      fs.statSync(path.join(root, 'scripts/build.mjs')).mtimeMs,
      fs.statSync(path.join(root, 'scripts/build-sdk.mjs')).mtimeMs,
      fs.statSync(path.join(root, 'package-lock.json')).mtimeMs,
    ) > built
  );
}
