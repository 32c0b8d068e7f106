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
      ['overview:read', 'credentials:read', 'webhooks:read', 'orders:read', 'account:self', 'usage:read', 'balance:read'],
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

  it('TOTP steps are 30 s long', () => {
    assert.equal(totpStep(0), 0);
    assert.equal(totpStep(29_999), 0);
    assert.equal(totpStep(30_000), 1);
  });
});
