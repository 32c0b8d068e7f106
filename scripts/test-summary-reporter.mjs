// A node:test reporter beside `spec`: writes one JSON line per skipped (or todo) test or suite, and
// per failed one, to its destination file; scripts/test.mjs prints them in the run's closing lines.
//
// It also counts, per file, the tests queued and the tests that completed: a file whose process
// ended before every queued test ran (as `--test-force-exit` did on Node 24) is reported as
// `unfinished`, and the run fails — otherwise the missing tests would simply not be counted.
export default async function* summary(source) {
  const queued = new Map();
  const completed = new Map();
  const bump = (m, file) => m.set(file, (m.get(file) ?? 0) + 1);
  for await (const event of source) {
    if (event.type === 'test:enqueue') bump(queued, event.data.file ?? '?');
    if (event.type === 'test:complete') bump(completed, event.data.file ?? '?');
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const d = event.data;
    const kind = event.type === 'test:fail' ? 'fail' : d.skip !== undefined ? 'skip' : d.todo !== undefined ? 'todo' : null;
    if (!kind) continue;
    // A failed suite is reported through the tests that failed in it.
    if (kind === 'fail' && d.details?.error?.failureType === 'subtestsFailed') continue;
    const reason = kind === 'skip' ? d.skip : kind === 'todo' ? d.todo : d.details?.error?.failureType;
    const entry = {
      kind,
      name: d.name,
      file: d.file ?? null,
      line: d.line ?? null,
      reason: typeof reason === 'string' ? reason : null,
      suite: d.details?.type === 'suite',
    };
    yield `${JSON.stringify(entry)}\n`;
  }
  for (const [file, n] of queued) {
    const done = completed.get(file) ?? 0;
    if (done < n)
      yield `${JSON.stringify({ kind: 'unfinished', name: `${done} of ${n} queued tests ran`, file, line: null, reason: 'the file ended before its tests did', suite: false })}\n`;
  }
}
