// Preloaded into every test file's process by scripts/test.mjs: gives each test (`it`/`test`, and
// `before`/`after`/`…Each` hooks) that sets no `timeout` of its own the default of
// TEST_TIMEOUT_SECONDS, so a hung test fails on its own instead of stalling the run. Suites
// (`describe`) get none: their tests are bounded one by one, and the file as a whole by
// `--test-timeout`.
//
// Why this reaches into node:test: on Node 20 and 22 `--test-timeout` bounds each test FILE (the
// flag is not passed on to the file's process; nodejs/node#50431, made per-test by #57672), and
// wrapping the public `it` would make every test report this file as its location. The runner
// passes --expose-internals only to the test processes; if the internals are not as expected, this
// says so once and the run falls back to the per-file bound.
import { createRequire } from 'node:module';

const seconds = Number(process.env.TEST_TIMEOUT_SECONDS || 120);
const timeout = seconds * 1000;
const require = createRequire(import.meta.url);

let internals = null;
try {
  internals = require('internal/test_runner/test');
} catch {
  // not started with --expose-internals
}
const { Test, Suite } = internals ?? {};
if (typeof Test?.prototype?.createSubtest !== 'function' || typeof Test.prototype.createHook !== 'function' || typeof Suite !== 'function') {
  process.emitWarning(`per-test timeouts unavailable on Node ${process.version}: only the per-file --test-timeout bounds this run`);
} else {
  const createSubtest = Test.prototype.createSubtest;
  Test.prototype.createSubtest = function (Factory, name, options, fn, overrides) {
    if (Factory !== Suite && !(Factory.prototype instanceof Suite)) {
      // The argument shapes node:test accepts: (fn), (options, fn), (name, fn), (name, options, fn).
      if (typeof name === 'function') [fn, name, options] = [name, undefined, undefined];
      else if (name !== null && typeof name === 'object') [fn, options, name] = [options, name, undefined];
      else if (typeof options === 'function') [fn, options] = [options, undefined];
      options = { timeout, ...options };
    }
    return createSubtest.call(this, Factory, name, options, fn, overrides);
  };
  const createHook = Test.prototype.createHook;
  Test.prototype.createHook = function (hookName, fn, options) {
    return createHook.call(this, hookName, fn, { timeout, ...options });
  };
}

// The file as a whole. Node 24 passes `--test-timeout=0` to each file's process and bounds nothing
// there, and a test that timed out can leave handles open (a child process, a socket) that keep the
// file's process alive for ever, holding back the whole run. So each file's process ends itself
// after TEST_FILE_TIMEOUT_SECONDS; the runner reports its unfinished tests as failed. The timer is
// unref'd: it never keeps a finished file alive. Only in a test file's process (node:test sets
// NODE_TEST_CONTEXT there), never in the runner.
const fileSeconds = Number(process.env.TEST_FILE_TIMEOUT_SECONDS || 1200);
if (process.env.NODE_TEST_CONTEXT && fileSeconds > 0) {
  setTimeout(() => {
    process.stderr.write(`\nthis test file ran past TEST_FILE_TIMEOUT_SECONDS (${fileSeconds} s): ending its process\n`);
    process.exit(1);
  }, fileSeconds * 1000).unref();
}
