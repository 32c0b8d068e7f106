// A node:test reporter beside `spec`: writes one JSON line per skipped (or todo) test or suite, and
// per failed one, to its destination file; scripts/test.mjs prints them in the run's closing lines.
//
// "Failed" means every test that failed, not only those node:test announces with `test:fail` and
// its `spec` reporter lists under "failing tests". A failure can reach the reporters in four other
// ways, and each is listed too:
//   - a test that was still running (or queued) when its file's process ended — a crash, a kill, a
//     `process.exit()`: it never gets `test:fail`, only `test:enqueue` without `test:complete`;
//   - the file's own abnormal end (a signal, an exit code other than 1) once one of its top-level
//     tests had failed: node:test then files it under "subtests failed" and reports it nowhere but
//     in the file's `test:complete`;
//   - an error thrown or a promise rejected by a test after it ended: a `test:diagnostic` ("would
//     have caused the test to fail"), never a `test:fail`, though it fails the file;
//   - a test (not a suite) that failed because subtests it started failed (`t.test`): counted by
//     node:test as failed, left out of `spec`'s list.
// A failing `todo` test is listed as to do, not failed (node:test does not count it as a failure).
//
// It also counts, per file, the tests queued and the tests that completed: a file whose process
// ended before every queued test ran (as `--test-force-exit` did on Node 24) is reported as
// `unfinished`, and the run fails — otherwise the missing tests would simply not be counted.
//
// Tests are told apart by file, test id, line, column, nesting and name — and counted, since a loop
// can declare several tests with all of these equal — never by name alone.
const ASYNC_AFTER_END = /generated asynchronous activity after the test ended/;
const ASYNC_TEST = /^Error: Test "(.*)" at (.+?):(\d+):\d+ generated asynchronous activity/s;
const ASYNC_ERROR = /This activity created the error "(.*?)" (?:and would have caused|which triggered)/s;

const keyOf = (d) => [d.file, d.testId, d.line, d.column, d.nesting, d.name].join('\0');
const given = (x) => x !== undefined && x !== false;

export default async function* summary(source) {
  const queued = new Map();
  const completed = new Map();
  const bump = (m, file) => m.set(file, (m.get(file) ?? 0) + 1);
  // key → [count still open, the enqueue event's data]
  const open = new Map();
  const line = (entry) => `${JSON.stringify(entry)}\n`;
  for await (const event of source) {
    const d = event.data;
    if (event.type === 'test:enqueue') {
      bump(queued, d.file ?? '?');
      const key = keyOf(d);
      const o = open.get(key);
      if (o) o[0]++;
      else open.set(key, [1, d]);
      continue;
    }
    if (event.type === 'test:complete') {
      bump(completed, d.file ?? '?');
      const o = open.get(keyOf(d));
      if (o && --o[0] === 0) open.delete(keyOf(d));
      const error = d.details?.error;
      // A test file's own end (only its wrapper carries the exit code and signal).
      if (
        d.details?.passed === false &&
        error?.failureType === 'subtestsFailed' &&
        (error.signal != null || (error.exitCode != null && error.exitCode !== 1))
      ) {
        const how = error.signal != null ? `killed by ${error.signal}` : `exited with code ${error.exitCode}`;
        yield line({ kind: 'fail', name: d.name, file: d.file ?? null, line: d.line ?? null, reason: `the file's process ${how}`, suite: false });
      }
      continue;
    }
    if (event.type === 'test:diagnostic') {
      const message = typeof d.message === 'string' ? d.message : '';
      if (!ASYNC_AFTER_END.test(message)) continue;
      const test = ASYNC_TEST.exec(message);
      const error = ASYNC_ERROR.exec(message)?.[1];
      const reason = `failed after it ended${error ? `: ${error}` : ''}`;
      if (test) yield line({ kind: 'fail', name: test[1], file: d.file ?? test[2], line: Number(test[3]), reason, suite: false });
      else yield line({ kind: 'fail', name: '(no test: a resource)', file: d.file ?? null, line: null, reason, suite: false });
      continue;
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const kind = given(d.skip) ? 'skip' : given(d.todo) ? 'todo' : event.type === 'test:fail' ? 'fail' : null;
    if (!kind) continue;
    const suite = d.details?.type === 'suite';
    // A failed suite is reported through the tests that failed in it.
    if (kind === 'fail' && suite && d.details?.error?.failureType === 'subtestsFailed') continue;
    const reason = kind === 'skip' ? d.skip : kind === 'todo' ? d.todo : d.details?.error?.failureType;
    yield line({ kind, name: d.name, file: d.file ?? null, line: d.line ?? null, reason: typeof reason === 'string' ? reason : null, suite });
  }
  // Tests (not suites: their tests are listed) queued but never completed.
  for (const [, [count, d]] of open) {
    if (d.type === 'suite') continue;
    for (let i = 0; i < count; i++) {
      yield line({
        kind: 'fail',
        name: d.name,
        file: d.file ?? null,
        line: d.line ?? null,
        reason: "did not finish: its file's process ended first",
        suite: false,
      });
    }
  }
  for (const [file, n] of queued) {
    const done = completed.get(file) ?? 0;
    if (done < n)
      yield line({
        kind: 'unfinished',
        name: `${done} of ${n} queued tests ran`,
        file,
        line: null,
        reason: 'the file ended before its tests did',
        suite: false,
      });
  }
}
