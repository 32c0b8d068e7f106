// A node:test reporter beside `spec`: writes one JSON line per skipped (or todo) test or suite, and
// per failed one, to its destination file; scripts/test.mjs prints them in the run's closing lines.
export default async function* summary(source) {
  for await (const event of source) {
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
}
