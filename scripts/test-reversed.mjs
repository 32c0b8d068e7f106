// Preloaded by `scripts/test-alone.mjs --reversed`: every suite (`describe`) runs its tests in the
// reverse of their order in the file, its hooks as usual. A test that read what an earlier test
// wrote, or that counted on a later test not having written yet, fails. Reaches into node:test's
// internals as scripts/test-timeouts.mjs does (the process runs with --expose-internals).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Suite } = require('internal/test_runner/test');
if (typeof Suite?.prototype?.run !== 'function') throw new Error(`test-reversed: node:test's Suite is not as expected on Node ${process.version}`);
const run = Suite.prototype.run;
Suite.prototype.run = async function () {
  // The suite's tests are known once its function has run (buildSuite); run() starts them in this order.
  await this.buildSuite;
  this.subtests.reverse();
  return run.call(this);
};
