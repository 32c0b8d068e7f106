import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ESTIMATED_LENGTH, weakPasswordProblem } from '../../src/domain/password-strength.ts';

/** 32 weak shapes (Front ends III, 15): the hand-written list and rules let 10 of these through. */
const WEAK = [
  'qwertyuiopas',
  '1q2w3e4r5t6y',
  'P@ssw0rd2024',
  'dragon-dragon',
  'Password1234!',
  '123456789012',
  'iloveyou2024!',
  'Summer2024!!',
  'Welcome12345',
  'letmein12345',
  'asdfghjkl123',
  'zxcvbnm12345',
  'monkey123456',
  'Qwerty123456',
  'abc123abc123',
  'football2024',
  'correcthorse',
  'Passw0rd!Passw0rd',
  'admin1234567',
  'trustno1trustno1',
  'aaaaaaaaaaaa',
  'abcdefghijkl',
  '098765432109',
  '!!123456789!!',
  'superman2024!!',
  'baseball1234',
  'January2024!',
  'michael12345',
  '12345678abcd',
  'qazwsxedcrfv',
  '1qaz2wsx3edc',
  'dragondragon!!',
];

const STRONG = [
  'correct horse battery staple',
  '7d!Ko29xwq4@',
  'my 2 dragons ate 11 apples',
  'Tr0ub4dor&3xyz',
  'vX9#mQ2$kL8@pR4!',
  'glacier-umbrella-quartz-90',
  'browser test passphrase',
];

describe('password strength (zxcvbn-ts, both front ends)', () => {
  it('refuses the 32 weak shapes, each with a reason naming what makes it guessable', () => {
    assert.equal(WEAK.length, 32);
    for (const p of WEAK) {
      const problem = weakPasswordProblem(p);
      assert.match(problem ?? 'accepted', /^is too easy to guess \(about 10\^\d+ guesses; 10\^10 needed\): .+/, p);
    }
    assert.match(weakPasswordProblem('P@ssw0rd2024')!, /“P@ssw0rd” \(a common password with look-alike characters\).*“2024” \(a recent year\)/);
    assert.match(weakPasswordProblem('qwertyuiopas')!, /“qwertyuiop” \(a common password\)/);
    assert.match(weakPasswordProblem('abcdefghijkl')!, /a sequence/);
    assert.match(weakPasswordProblem('trustno1trustno1')!, /a repetition/);
    assert.match(weakPasswordProblem('dragon-dragon')!, /a series of words everyone knows/);
  });

  it('accepts passphrases and random passwords', () => {
    for (const p of STRONG) assert.equal(weakPasswordProblem(p), null, p);
  });

  it('the length rules come first (12–256, no edge spaces or control characters)', () => {
    assert.match(weakPasswordProblem('short')!, /at least 12/);
    assert.match(weakPasswordProblem('x'.repeat(257))!, /at most 256/);
    assert.match(weakPasswordProblem(' correct horse battery ')!, /whitespace/);
  });

  it("the account's own address and the product's name count as guesses", () => {
    assert.equal(weakPasswordProblem('Zorbelquint#71'), null);
    assert.match(weakPasswordProblem('Zorbelquint#71', ['zorbelquint@shop.example'])!, /“Zorbelquint” \(your own address, or this service’s name\)/);
    assert.match(weakPasswordProblem('Stockist2024!')!, /“Stockist” \(your own address, or this service’s name\)/);
  });

  it(`only the first ${ESTIMATED_LENGTH} characters are estimated; the time of a long password is bounded (measured)`, (t) => {
    const strongStart = 'glacier-umbrella-quartz-90 '.repeat(10).slice(0, 256);
    assert.equal(weakPasswordProblem(strongStart), null);
    // A weak start is refused however the password goes on: what follows the first 64 is not looked at.
    assert.match(weakPasswordProblem(`${'password'.repeat(8)}${'vX9#mQ2$kL8@pR4!'.repeat(12)}`)!, /too easy to guess/);
    // Mixed l33t-able characters were the slow case (~2.3 s for 256 before the caps); measured, not asserted.
    for (const p of ['P@ssw0rd'.repeat(32), 'a1'.repeat(128), Array.from({ length: 256 }, (_, i) => 'aZ3$kq9!@0ei1o'[(i * 7) % 14]).join('')]) {
      const started = performance.now();
      weakPasswordProblem(p);
      t.diagnostic(`${p.length} characters (${p.slice(0, 8)}…): ${(performance.now() - started).toFixed(1)} ms`);
    }
  });
});
