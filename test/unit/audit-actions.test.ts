import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ACTOR_KINDS, AUDIT_ACTIONS } from '../../src/domain/audit.ts';

describe('the audit vocabulary', () => {
  // Two branches once both added an action: the operator API's audit schema (an enum of these)
  // then failed to compile and every GET /admin/v1/audit answered 500.
  it('names each action and actor kind once', () => {
    assert.deepEqual(
      AUDIT_ACTIONS.filter((a, i) => AUDIT_ACTIONS.indexOf(a) !== i),
      [],
    );
    assert.equal(new Set(ACTOR_KINDS).size, ACTOR_KINDS.length);
  });
});
