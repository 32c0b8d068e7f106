import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/domain/errors.ts';
import { blank, choiceFilter, dayRange, merchantFilter } from '../../src/domain/list-filters.ts';

/** The message of a refusal (`<field>: <reason>`, domain/errors.ts fieldError). */
const refusedField = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof AppError, String(e));
    return e.message;
  }
  assert.fail('expected a refusal');
};

describe('list filters: the fields the console lists share', () => {
  it('a blank or missing field is empty text', () => {
    assert.equal(blank(undefined), '');
    assert.equal(blank('  7 '), '7');
  });

  it('a merchant is none, an id, or a 400 on merchant', () => {
    assert.equal(merchantFilter(''), null);
    assert.equal(merchantFilter('12'), 12);
    assert.match(
      refusedField(() => merchantFilter('twelve')),
      /merchant/,
    );
  });

  it('a choice is none, one of the allowed values, or a 400 listing them', () => {
    const allowed = ['open', 'done'] as const;
    assert.equal(choiceFilter('status', '', allowed), null);
    assert.equal(choiceFilter('status', 'done', allowed), 'done');
    assert.match(
      refusedField(() => choiceFilter('status', 'closed', allowed)),
      /status.*open, done/,
    );
  });

  it('days are UTC and both ends included; a bad date or a reversed range is a 400 naming the field', () => {
    const day = Date.UTC(2026, 10, 25);
    assert.deepEqual(dayRange('', ''), { createStart: null, createEnd: null });
    assert.deepEqual(dayRange('2026-11-25', '2026-11-25'), { createStart: day, createEnd: day + 86_400_000 });
    assert.deepEqual(dayRange('', '2026-11-25'), { createStart: null, createEnd: day + 86_400_000 });
    assert.match(
      refusedField(() => dayRange('2026-02-30', '')),
      /from/,
    );
    assert.match(
      refusedField(() => dayRange('', 'tomorrow')),
      /to/,
    );
    assert.match(
      refusedField(() => dayRange('2026-11-26', '2026-11-25')),
      /to.*before from/,
    );
  });
});
