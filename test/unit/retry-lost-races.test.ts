import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { retryLostRaces } from '../../src/services/idempotency.service.ts';

const failing = (code: string) => Object.assign(new Error(`database error ${code}`), { code });

describe('retryLostRaces: a deadlock victim or a serialization failure runs again', () => {
  it('runs the transaction again after 40P01 and 40001, and returns what the attempt that succeeded returned', async () => {
    const codes = ['40P01', '40001'];
    let attempts = 0;
    const result = await retryLostRaces(async () => {
      attempts++;
      const code = codes.shift();
      if (code) throw failing(code);
      return 'decided';
    });
    assert.equal(result, 'decided');
    assert.equal(attempts, 3);
  });

  it('gives up after 5 attempts with the last error', async () => {
    let attempts = 0;
    await assert.rejects(
      retryLostRaces(async () => {
        attempts++;
        throw failing('40P01');
      }),
      /40P01/,
    );
    assert.equal(attempts, 5);
  });

  it('does not retry anything else: a unique violation, a refusal, SQLite busy (its own timeout waits)', async () => {
    for (const code of ['23505', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_BUSY', '']) {
      let attempts = 0;
      await assert.rejects(
        retryLostRaces(async () => {
          attempts++;
          throw failing(code);
        }),
      );
      assert.equal(attempts, 1, `code ${code || '(none)'}`);
    }
  });
});
