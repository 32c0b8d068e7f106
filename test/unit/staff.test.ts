import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeAuditCursor, encodeAuditCursor } from '../../src/domain/audit.ts';
import { IMPORT_SECTIONS } from '../../src/domain/import-format.ts';
import {
  IMPORT_ROW_PERMISSION,
  PERMISSIONS,
  ROLE_PERMISSIONS,
  STAFF_ROLES,
  can,
  emailKey,
  emailProblem,
  passwordProblem,
  sessionExpiry,
  staffImportRights,
} from '../../src/domain/staff.ts';
import { CONSOLE_ROUTES, consoleRouteFor } from '../../src/web/console/console-routes.ts';

describe('console roles (one table: src/domain/staff.ts)', () => {
  it('gives the owner everything, and support and warehouse what the issue lists', () => {
    for (const p of PERMISSIONS) assert.ok(can('owner', p), `owner: ${p}`);
    assert.ok(can('support', 'refunds:review') && can('support', 'orders:read') && can('support', 'merchants:read') && can('support', 'webhooks:manage'));
    assert.ok(!can('support', 'merchants:write') && !can('support', 'orders:fulfil') && !can('support', 'stock:adjust') && !can('support', 'staff:manage'));
    assert.ok(can('warehouse', 'orders:fulfil') && can('warehouse', 'stock:adjust') && can('warehouse', 'import:run'));
    assert.ok(can('support', 'orders:cancel') && !can('warehouse', 'orders:cancel'), 'cancelling a split credits money: not the warehouse');
    assert.ok(
      !can('warehouse', 'refunds:review') && !can('warehouse', 'refunds:read') && !can('warehouse', 'merchants:read') && !can('warehouse', 'audit:read'),
    );
    for (const role of STAFF_ROLES) for (const p of ROLE_PERMISSIONS[role]) assert.ok((PERMISSIONS as readonly string[]).includes(p));
  });

  it('lists each console route once with a known permission, and finds it whatever its parameters are called', () => {
    const keys = CONSOLE_ROUTES.map((r) => `${r.method} ${r.path}`);
    assert.equal(new Set(keys).size, keys.length);
    for (const r of CONSOLE_ROUTES) assert.ok(r.permission === 'public' || (PERMISSIONS as readonly string[]).includes(r.permission), r.path);
    assert.equal(consoleRouteFor('POST', '/console/refunds/:id/approve')?.permission, 'refunds:review');
    assert.equal(consoleRouteFor('HEAD', '/console')?.permission, 'dashboard:read');
    assert.equal(consoleRouteFor('GET', '/console/secret'), undefined);
    // Only sign-in, the static assets and a password reset link's page (its token is the credential) are open without a session.
    assert.deepEqual(
      CONSOLE_ROUTES.filter((r) => r.permission === 'public').map((r) => `${r.method} ${r.path}`),
      ['GET /sign-in', 'POST /sign-in', 'GET /assets/:file', 'GET /password-reset/:token', 'POST /password-reset/:token'],
    );
  });
});

describe('import rights (issue 44, 10): a role imports what it may write by hand', () => {
  it('refuses each kind of row whose permission the role lacks, saying which permission', () => {
    assert.deepEqual(staffImportRights('owner'), { refused: {} });
    assert.deepEqual(staffImportRights('warehouse').refused, {
      warehouses: 'the warehouse role may not write warehouses (that needs catalog:write)',
      categories: 'the warehouse role may not write categories (that needs catalog:write)',
      products: 'the warehouse role may not write products (that needs catalog:write)',
      channels: 'the warehouse role may not write channels (that needs catalog:write)',
    });
    assert.deepEqual(Object.keys(staffImportRights('support').refused).sort(), [...IMPORT_SECTIONS].sort());
    // import:run opens the pages and writes nothing by itself.
    assert.ok(!Object.values(IMPORT_ROW_PERMISSION).includes('import:run'));
    for (const role of STAFF_ROLES)
      for (const section of IMPORT_SECTIONS)
        assert.equal(section in staffImportRights(role).refused, !can(role, IMPORT_ROW_PERMISSION[section]), `${role} ${section}`);
  });
});

describe('staff credentials', () => {
  it('compares emails without case and checks their shape', () => {
    assert.equal(emailKey('  Ops@Example.COM '), 'ops@example.com');
    assert.equal(emailProblem('ops@example.com'), null);
    assert.match(emailProblem('ops example.com')!, /name@example\.com/);
    assert.match(emailProblem(`${'a'.repeat(250)}@b.co`)!, /254/);
  });

  it('wants 12 to 256 characters, no surrounding whitespace, no control characters', () => {
    assert.equal(passwordProblem('correct horse battery'), null);
    assert.match(passwordProblem('short')!, /at least 12/);
    assert.match(passwordProblem('x'.repeat(257))!, /at most 256/);
    assert.match(passwordProblem(' padded password ')!, /whitespace/);
    assert.match(passwordProblem('tab\tinside password')!, /control/);
  });
});

describe('session expiry', () => {
  const limits = { idleMs: 30 * 60_000, maxMs: 12 * 3_600_000 };
  it('ends a session idle for the idle limit, and any session at the absolute limit', () => {
    const t0 = 1_700_000_000_000;
    assert.equal(sessionExpiry({ createdAt: t0, lastSeenAt: t0 }, limits, t0 + limits.idleMs - 1), null);
    assert.equal(sessionExpiry({ createdAt: t0, lastSeenAt: t0 }, limits, t0 + limits.idleMs), 'idle');
    assert.equal(sessionExpiry({ createdAt: t0, lastSeenAt: t0 + limits.maxMs - 60_000 }, limits, t0 + limits.maxMs - 1), null);
    assert.equal(sessionExpiry({ createdAt: t0, lastSeenAt: t0 + limits.maxMs - 60_000 }, limits, t0 + limits.maxMs), 'absolute');
  });
});

describe('audit cursor', () => {
  it('round-trips ids and refuses anything it did not make', () => {
    for (const id of [1, 42, 7_000_000_000_123, Number.MAX_SAFE_INTEGER]) assert.equal(decodeAuditCursor(encodeAuditCursor(id)), id);
    for (const bad of ['', 'au1_', 'au1_-1', 'au1_ZZ', 'oc1_abc', 'au1_zzzzzzzzzzzz', 'au1_0']) assert.equal(decodeAuditCursor(bad), null, bad);
  });
});
