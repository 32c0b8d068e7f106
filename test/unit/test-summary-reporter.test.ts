import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
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
    assert.deepEqual(lines, [
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
});
