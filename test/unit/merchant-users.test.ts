import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MANAGER_PERMISSIONS, MERCHANT_ROLES, mayManage, merchantPasswordProblem, totpStep } from '../../src/domain/merchant-users.ts';
import { COMMON_PASSWORDS } from '../../src/domain/common-passwords.ts';

describe('business manager rules', () => {
  it('roles: admin may do everything, developer all but team and audit, viewer only reads', () => {
    for (const p of MANAGER_PERMISSIONS) assert.equal(mayManage('admin', p), true, p);
    assert.deepEqual(
      MANAGER_PERMISSIONS.filter((p) => !mayManage('developer', p)),
      ['team:manage', 'audit:read'],
    );
    assert.deepEqual(
      MANAGER_PERMISSIONS.filter((p) => mayManage('viewer', p)),
      ['overview:read', 'credentials:read', 'webhooks:read', 'orders:read', 'claims:read', 'account:self', 'usage:read', 'balance:read'],
    );
    assert.deepEqual(MERCHANT_ROLES, ['admin', 'developer', 'viewer']);
  });

  it('passwords: length first, then the common list, padded or doubled', () => {
    assert.ok(COMMON_PASSWORDS.size > 990, 'the top 1,000 (a few repeat in lower case)');
    assert.match(merchantPasswordProblem('short')!, /at least 12/);
    for (const p of ['qwertyuiop12', 'Password1234!', 'superman2024!!', 'footballfootball', 'Baseball123456'])
      assert.match(merchantPasswordProblem(p)!, /too common/, p);
    for (const p of ['correct horse battery staple', 'qwerty is my friend', 'footballfootbal']) assert.equal(merchantPasswordProblem(p), null, p);
  });

  it('passwords (Hardening III): listed ones padded with digits or symbols on either side, runs and repetitions of one class', () => {
    const refused = [
      // Listed passwords made only of digits, padded with digits: the rule used to look only at letters.
      '123456789012',
      '1234567890123',
      '12345678901234567890',
      '0000123456789',
      '!!123456789!!',
      // Listed ones with a prefix, a suffix or both.
      '2024password',
      '!!!password!!!',
      '1234superman',
      '#1qaz2wsx2024',
      'iloveyou.....',
      // Runs and repetitions of one character class.
      '111111111111',
      'aaaaaaaaaaaa',
      '!!!!!!!!!!!!',
      '098765432109',
      'abcdefghijklm',
      'zyxwvutsrqpo',
      'abcabcabcabc',
      '121212121212',
      '135791357913',
      '#$%#$%#$%#$%',
      // A repeated listed password, padded.
      'dragondragon!!',
      // A run or repetition with digits or symbols around it.
      'aaaaaaaaaaaa1',
      '!abcdefghijkl!',
    ];
    for (const p of refused) assert.match(merchantPasswordProblem(p) ?? 'accepted', /too common|too predictable/, p);
    const accepted = [
      'correct horse battery staple',
      '830491750284',
      '7d!Ko29xwq4@',
      'password manager generated: x9!',
      'my 2 dragons ate 11 apples',
      'abcdefghijk1m',
      'Tr0ub4dor&3xyz',
      'footballfootbal',
    ];
    for (const p of accepted) assert.equal(merchantPasswordProblem(p), null, p);
  });

  it('TOTP steps are 30 s long', () => {
    assert.equal(totpStep(0), 0);
    assert.equal(totpStep(29_999), 0);
    assert.equal(totpStep(30_000), 1);
  });
});
