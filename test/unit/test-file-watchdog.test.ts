import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { exited } from '../e2e/process.ts';

/**
 * What keeps one stuck file from holding the whole run: a test whose handles stay open after it
 * timed out (a child process still running) must not keep its file's process alive for ever.
 */
describe('a test file that cannot end', () => {
  it('is ended by the watchdog after TEST_FILE_TIMEOUT_SECONDS, and the files after it still run', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-watchdog-'));
    try {
      // A test that times out while an interval (standing for a child process) keeps the process alive.
      fs.writeFileSync(
        path.join(dir, 'a.test.mjs'),
        `import { test } from 'node:test';\ntest('hangs', { timeout: 200 }, () => new Promise(() => setInterval(() => {}, 1000)));\n`,
      );
      fs.writeFileSync(path.join(dir, 'b.test.mjs'), `import { test } from 'node:test';\ntest('b runs', () => {});\n`);
      const preload = pathToFileURL(path.resolve(import.meta.dirname, '../../scripts/test-timeouts.mjs')).href;
      const started = Date.now();
      const run = spawnSync(process.execPath, ['--import', preload, '--test', '--test-concurrency=1', '--test-reporter=tap', 'a.test.mjs', 'b.test.mjs'], {
        cwd: dir,
        encoding: 'utf8',
        // Not as a child of this run's runner (NODE_TEST_CONTEXT would make it one).
        env: { PATH: process.env.PATH, TEST_FILE_TIMEOUT_SECONDS: '2' },
        // Without the watchdog the run never ends: this bound makes that a failure, not a hang.
        timeout: 60_000,
      });
      assert.equal(run.signal, null, `the run was still going after ${Date.now() - started} ms`);
      assert.equal(run.status, 1);
      assert.match(run.stdout + run.stderr, /ran past TEST_FILE_TIMEOUT_SECONDS \(2 s\)/);
      assert.match(run.stdout, /^ok \d+ - b runs/m);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('exited(child)', () => {
  it('resolves for a child a signal already ended, whose exitCode stays null', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('spawn', resolve));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(child.exitCode, null);
    assert.equal(child.signalCode, 'SIGKILL');
    // A wait on 'exit' would never resolve here (it has fired): the race is bounded to fail, not hang.
    const late = await Promise.race([exited(child).then(() => 'resolved'), new Promise((r) => setTimeout(() => r('still waiting'), 2_000))]);
    assert.equal(late, 'resolved');
  });
});
