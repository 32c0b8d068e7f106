import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
// @ts-expect-error: a plain ES module of the test runner, without type declarations
import summary from '../../scripts/test-summary-reporter.mjs';

async function report(events: { type: string; data: Record<string, unknown> }[]): Promise<Record<string, unknown>[]> {
  async function* source() {
    yield* events;
  }
  const out: Record<string, unknown>[] = [];
  for await (const line of summary(source())) out.push(JSON.parse(line));
  return out;
}

/** The run's closing summary: a file whose process ended before all its queued tests ran fails the run (seen with --test-force-exit on Node 24). */
describe('the test run summary reporter', () => {
  const queued = (file: string) => ({ type: 'test:enqueue', data: { file, name: 't' } });
  const done = (file: string) => ({ type: 'test:complete', data: { file, name: 't' } });

  it('reports a file whose tests did not all complete', async () => {
    const lines = await report([
      queued('/a.test.ts'),
      queued('/a.test.ts'),
      queued('/a.test.ts'),
      done('/a.test.ts'),
      queued('/b.test.ts'),
      done('/b.test.ts'),
    ]);
    const notFinished = { kind: 'fail', name: 't', file: '/a.test.ts', line: null, reason: "did not finish: its file's process ended first", suite: false };
    assert.deepEqual(lines, [
      notFinished,
      notFinished,
      { kind: 'unfinished', name: '1 of 3 queued tests ran', file: '/a.test.ts', line: null, reason: 'the file ended before its tests did', suite: false },
    ]);
  });

  it('reports nothing when every queued test completed, and still lists failures', async () => {
    const lines = await report([
      queued('/a.test.ts'),
      done('/a.test.ts'),
      { type: 'test:fail', data: { name: 'broken', file: '/a.test.ts', line: 3, details: { error: { failureType: 'testCodeFailure' } } } },
    ]);
    assert.deepEqual(lines, [{ kind: 'fail', name: 'broken', file: '/a.test.ts', line: 3, reason: 'testCodeFailure', suite: false }]);
  });

  it('lists every failed test across files and nesting levels, telling apart tests of the same name and line', async () => {
    const fail = (file: string, name: string, extra: Record<string, unknown> = {}, failureType = 'testCodeFailure', type = 'test') => ({
      type: 'test:fail',
      data: { file, name, line: 1, ...extra, details: { type, error: { failureType } } },
    });
    const lines = await report([
      // a.test.ts: a leaf at nesting 2, its suites failing through it, and a leaf at the top.
      fail('/a.test.ts', 'deep', { nesting: 2, line: 7 }),
      fail('/a.test.ts', 'inner', { nesting: 1, line: 6 }, 'subtestsFailed', 'suite'),
      fail('/a.test.ts', 'outer', { nesting: 0, line: 5 }, 'subtestsFailed', 'suite'),
      fail('/a.test.ts', 'top', { nesting: 0, line: 20 }),
      // b.test.ts: one test declared in a loop over two databases fails in both.
      fail('/b.test.ts', 'same', { nesting: 1, line: 9, testId: 4 }),
      fail('/b.test.ts', 'same', { nesting: 1, line: 9, testId: 8 }),
      // c.test.ts: a test whose t.test subtest failed, a hook, a cancelled test.
      fail('/c.test.ts', 'sub', { nesting: 1, line: 4 }),
      fail('/c.test.ts', 'parent', { nesting: 0, line: 3 }, 'subtestsFailed'),
      fail('/c.test.ts', 'with hooks', { nesting: 0, line: 10 }, 'hookFailed', 'suite'),
      fail('/c.test.ts', 'cancelled', { nesting: 1, line: 11 }, 'cancelledByParent'),
      // A failing todo test is to do, not failed.
      {
        type: 'test:fail',
        data: { file: '/c.test.ts', name: 'later', line: 30, todo: 'not yet', details: { type: 'test', error: { failureType: 'testCodeFailure' } } },
      },
    ]);
    assert.deepEqual(
      lines.filter((l) => l.kind === 'fail').map((l) => `${l.file}:${l.line} ${l.name} (${l.reason})`),
      [
        '/a.test.ts:7 deep (testCodeFailure)',
        '/a.test.ts:20 top (testCodeFailure)',
        '/b.test.ts:9 same (testCodeFailure)',
        '/b.test.ts:9 same (testCodeFailure)',
        '/c.test.ts:4 sub (testCodeFailure)',
        '/c.test.ts:3 parent (subtestsFailed)',
        '/c.test.ts:10 with hooks (hookFailed)',
        '/c.test.ts:11 cancelled (cancelledByParent)',
      ],
    );
    assert.deepEqual(
      lines.filter((l) => l.kind === 'todo').map((l) => l.name),
      ['later'],
    );
  });

  it('lists the tests a crashed file left running, the crash, and errors thrown after a test ended', async () => {
    const at = (type: string, name: string, line: number, extra: Record<string, unknown> = {}) => ({
      type,
      data: { file: '/d.test.ts', name, line, column: 1, nesting: 0, ...extra },
    });
    const lines = await report([
      at('test:enqueue', '/d.test.ts', 1, { testId: 1 }),
      at('test:enqueue', 'fails', 3, { testId: 1 }),
      at('test:enqueue', 'crashes', 4, { testId: 2 }),
      at('test:enqueue', 'never runs', 5, { testId: 3 }),
      at('test:enqueue', 'a suite', 6, { testId: 4, type: 'suite' }),
      at('test:complete', 'fails', 3, { testId: 1, details: { passed: false, error: { failureType: 'testCodeFailure' } } }),
      at('test:fail', 'fails', 3, { details: { type: 'test', error: { failureType: 'testCodeFailure' } } }),
      {
        type: 'test:diagnostic',
        data: {
          file: '/d.test.ts',
          line: 1,
          nesting: 0,
          level: 'info',
          message:
            'Error: Test "sends later" at test/d.test.ts:12:3 generated asynchronous activity after the test ended. This activity created the error "Error: late" and would have caused the test to fail, but instead triggered an uncaughtException event.',
        },
      },
      // The file's wrapper: killed, after a top-level failure (node:test then reports it nowhere else).
      at('test:complete', '/d.test.ts', 1, {
        testId: 1,
        details: { passed: false, error: { failureType: 'subtestsFailed', exitCode: null, signal: 'SIGSEGV' } },
      }),
    ]);
    assert.deepEqual(
      lines.map((l) => `${l.kind} ${l.file}:${l.line} ${l.name} (${l.reason})`),
      [
        'fail /d.test.ts:3 fails (testCodeFailure)',
        'fail /d.test.ts:12 sends later (failed after it ended: Error: late)',
        "fail /d.test.ts:1 /d.test.ts (the file's process killed by SIGSEGV)",
        "fail /d.test.ts:4 crashes (did not finish: its file's process ended first)",
        "fail /d.test.ts:5 never runs (did not finish: its file's process ended first)",
        'unfinished /d.test.ts:null 2 of 5 queued tests ran (the file ended before its tests did)',
      ],
    );
  });

  it('lists every failure of a real node --test run: three files, nesting, a crash, an error after the end', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-summary-'));
    try {
      const write = (name: string, body: string) => fs.writeFileSync(path.join(dir, name), `import { describe, it, test } from 'node:test';\n${body}\n`);
      write(
        'a.test.mjs',
        `describe('outer', () => {
  it('a passes', () => {});
  it('a fails', () => { throw new Error('a'); });
  describe('inner', () => { it('a deep fails', () => { throw new Error('deep'); }); });
});
for (const db of ['one', 'two']) describe(db, () => { it('same name', () => { throw new Error(db); }); });`,
      );
      write(
        'b.test.mjs',
        `test('b parent', async (t) => { await t.test('b sub fails', () => { throw new Error('sub'); }); });
test('b late', () => { setTimeout(() => { throw new Error('late'); }, 1); });
test('b waits', () => new Promise((r) => setTimeout(r, 50)));`,
      );
      write(
        'c.test.mjs',
        `test('c fails', () => { throw new Error('c'); });
test('c crashes', () => new Promise(() => setTimeout(() => process.kill(process.pid, 'SIGKILL'), 10)));
test('c never runs', () => {});`,
      );
      const out = path.join(dir, 'summary.jsonl');
      const reporter = pathToFileURL(path.resolve(import.meta.dirname, '../../scripts/test-summary-reporter.mjs')).href;
      const run = spawnSync(
        process.execPath,
        ['--test', '--test-concurrency=2', `--test-reporter=${reporter}`, `--test-reporter-destination=${out}`, 'a.test.mjs', 'b.test.mjs', 'c.test.mjs'],
        // Not as a child of this run's runner (NODE_TEST_CONTEXT would make it one).
        { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH } },
      );
      assert.equal(run.status, 1, run.stderr);
      const entries = fs
        .readFileSync(out, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      const failed = entries
        .filter((e) => e.kind === 'fail')
        // The file's own entry is named by its path (relative or absolute, by Node version).
        .map((e) => `${path.basename(e.file)} ${path.basename(e.name)}`)
        .sort();
      assert.deepEqual(failed, [
        'a.test.mjs a deep fails',
        'a.test.mjs a fails',
        'a.test.mjs same name',
        'a.test.mjs same name',
        'b.test.mjs b late',
        'b.test.mjs b parent',
        'b.test.mjs b sub fails',
        'c.test.mjs c crashes',
        'c.test.mjs c fails',
        'c.test.mjs c never runs',
        'c.test.mjs c.test.mjs',
      ]);
      assert.deepEqual(
        entries.filter((e) => e.kind === 'unfinished').map((e) => path.basename(e.file)),
        ['c.test.mjs'],
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
