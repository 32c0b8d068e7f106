import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MANAGER_PERMISSIONS, MERCHANT_ROLES, mayManage, totpStep } from '../../src/domain/merchant-users.ts';

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

  it('TOTP steps are 30 s long', () => {
    assert.equal(totpStep(0), 0);
    assert.equal(totpStep(29_999), 0);
    assert.equal(totpStep(30_000), 1);
  });
});
