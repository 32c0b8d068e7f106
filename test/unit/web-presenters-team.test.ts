import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { ManagerUser } from '../../src/services/manager-sessions.service.ts';
import type { InvitationRow, MerchantUserRow } from '../../src/store/merchant-users.repository.ts';
import {
  presentInvitation,
  presentManagerAccount,
  presentManagerCode,
  presentManagerPasswordReset,
  presentManagerSignIn,
  presentTeam,
  presentTwoFactor,
} from '../../src/web/manager/present-team.ts';
import { MANAGER_VIEWS } from '../../src/web/manager/views.ts';
import type { Frame, PageModel } from '../../src/web/shared/views.ts';

// The business manager's sign-in, account, two-factor and team pages as models, without a
// template (issue 30, rule 3): what each presenter makes of a service's answer.

const AT = Date.UTC(2026, 4, 1, 14, 3, 7);
const AT_TIME = '<time datetime="2026-05-01T14:03:07Z" title="2026-05-01 14:03:07 UTC">2026-05-01 14:03 UTC</time>';
const LATER = AT + 3 * 24 * 3600 * 1000;
const LATER_TIME = '<time datetime="2026-05-04T14:03:07Z" title="2026-05-04 14:03:07 UTC">2026-05-04 14:03 UTC</time>';
const TOKEN = 'A'.repeat(43);

const me: ManagerUser = {
  userId: 7100000000001,
  merchantId: 42,
  merchantName: 'Acme <&> "Shop"',
  email: 'boss@example.com',
  role: 'admin',
  csrfSecret: 'csrf',
  sessionHash: 'hash',
  stage: 'complete',
  twoFactor: false,
  mustEnrol: false,
};

/** A team member as the repository lists it (services/merchant-team.service.ts `team`), secrets and all. */
const memberRow = (id: number, email: string, role: MerchantUserRow['role'], extra: Partial<MerchantUserRow> = {}): MerchantUserRow => ({
  id,
  merchant_id: 42,
  email,
  email_key: email.toLowerCase(),
  role,
  password_hash: 'scrypt$secret-hash',
  totp_secret: null,
  totp_pending_secret: 'PENDINGSECRET',
  totp_last_step: null,
  last_sign_in_at: AT,
  password_changed_at: AT,
  created_at: AT,
  updated_at: AT,
  ...extra,
});

const invitationRow: InvitationRow = {
  id: 6,
  merchant_id: 42,
  email: 'new@example.com',
  email_key: 'new@example.com',
  role: 'viewer',
  token_hash: 'token-hash',
  expires_at: LATER,
  accepted_at: null,
  revoked_at: null,
  created_by: 'merchant_user:7100000000001',
  created_at: AT,
};

const teamAnswer = {
  members: [
    memberRow(7100000000001, 'boss@example.com', 'admin', { totp_secret: 'BOSSSECRET' }),
    memberRow(7100000000003, 'dev@example.com', 'developer', { totp_secret: 'DEVSECRET' }),
    memberRow(7100000000004, 'view<er>@example.com', 'viewer', { last_sign_in_at: null }),
  ],
  invitations: [invitationRow],
  requireTwoFactor: false,
};

describe('signing in (views sign-in, code)', () => {
  it('sign-in: empty at first; a refusal keeps the email and says why', () => {
    assert.deepEqual(presentManagerSignIn('', null), { title: 'Sign in', email: '', error: null, businesses: null, done: null });
    assert.match(presentManagerSignIn('', null, null, 'Signed out everywhere.').done ?? '', /^Signed out everywhere/);
    const refused = presentManagerSignIn('boss@example.com', 'Wrong email or password, or the account is disabled.');
    assert.deepEqual([refused.email, refused.error, refused.businesses], ['boss@example.com', 'Wrong email or password, or the account is disabled.', null]);
  });

  it('sign-in: the businesses an address opens become options, the merchant id as text', () => {
    const view = presentManagerSignIn('boss@example.com', 'choose one', [
      { merchantId: 1, merchantName: 'Acme <&> "Shop"' },
      { merchantId: 2, merchantName: 'Beta & Co' },
    ]);
    assert.deepEqual(view.businesses, [
      { value: '1', label: 'Acme <&> "Shop"' },
      { value: '2', label: 'Beta & Co' },
    ]);
  });

  it('code: the title, and the refusal when there is one', () => {
    assert.deepEqual(presentManagerCode(), { title: 'Two-factor code', error: null });
    assert.equal(presentManagerCode('Too many attempts; try again in 30 s.').error, 'Too many attempts; try again in 30 s.');
  });
});

describe('one-time links (views invitation, password-reset)', () => {
  it('invitation: the business, role and address it is for; the form posts to the link', () => {
    const invitation = { ...invitationRow, role: 'admin' as const, email: 'boss@example.com', merchant_name: 'Acme <&> "Shop"' };
    assert.deepEqual(presentInvitation(invitation, TOKEN), {
      title: 'Join Acme <&> "Shop"',
      merchant: 'Acme <&> "Shop"',
      role: 'admin',
      email: 'boss@example.com',
      action: `/manager/invitations/${TOKEN}`,
      error: null,
    });
    assert.equal(presentInvitation(invitation, TOKEN, 'The two passwords differ.').error, 'The two passwords differ.');
  });

  it('password reset: the account and its business; the form posts to the link', () => {
    const reset = { id: 3, user_id: 7100000000003, token_hash: 'h', email: 'dev@example.com', email_key: 'dev@example.com', merchant_name: 'Acme' };
    assert.deepEqual(presentManagerPasswordReset(reset, TOKEN, 'The two passwords differ.'), {
      title: 'Choose a new password',
      email: 'dev@example.com',
      merchant: 'Acme',
      action: `/manager/password-reset/${TOKEN}`,
      error: 'The two passwords differ.',
    });
  });
});

describe('your account (views.account)', () => {
  const sessions = [
    { current: true, stage: 'complete' as const, address: '10.0.0.3', createdAt: AT, lastSeenAt: LATER },
    { current: false, stage: 'password' as const, address: null, createdAt: AT, lastSeenAt: AT },
    { current: false, stage: 'complete' as const, address: '10.0.0.9', createdAt: AT, lastSeenAt: AT },
  ];

  it('the sessions: times as <time>, a missing address as —, the state in words', () => {
    const view = presentManagerAccount(me, sessions);
    assert.equal(view.title, 'Your account');
    assert.equal(view.username, 'boss@example.com');
    assert.deepEqual(view.sessions[0], { current: true, signedIn: AT_TIME, lastActive: LATER_TIME, address: '10.0.0.3', state: 'this session' });
    assert.deepEqual(
      view.sessions.map((s) => [s.current, s.address, s.state]),
      [
        [true, '10.0.0.3', 'this session'],
        [false, '—', 'waiting for a two-factor code'],
        [false, '10.0.0.9', 'signed in'],
      ],
    );
  });

  it('a refusal is the page’s error', () => {
    assert.equal(presentManagerAccount(me, sessions, 'The two new passwords differ.').error, 'The two new passwords differ.');
    assert.equal(presentManagerAccount(me, sessions).error, null);
  });
});

describe('two-factor sign-in (views two-factor)', () => {
  const pending = { secret: 'JBSWY3DPEHPK3PXP', uri: 'otpauth://totp/Stockist:boss%40example.com?secret=JBSWY3DPEHPK3PXP' };
  const off = { on: false as const, pending, qrSvg: '<svg role="img"></svg>' };

  it('off: the key as a QR code (markup), as text and as a link', () => {
    const view = presentTwoFactor(me, off);
    assert.deepEqual(view, {
      title: 'Two-factor sign-in',
      mustEnrol: false,
      error: null,
      recoveryCodes: null,
      state: { on: false, qr: '<svg role="img"></svg>', secret: pending.secret, uri: pending.uri },
    });
  });

  it('the team’s requirement is said only while it is off', () => {
    assert.equal(presentTwoFactor({ mustEnrol: true }, off).mustEnrol, true);
    assert.equal(presentTwoFactor({ mustEnrol: true }, { on: true, recoveryCodesLeft: 10 }).mustEnrol, false);
  });

  it('on: the recovery codes left, counted in words (none, one, several)', () => {
    const left = (n: number) => presentTwoFactor(me, { on: true, recoveryCodesLeft: n }).state;
    assert.deepEqual(left(10), { on: true, codesLeft: '10', codesLeftText: 'You have 10 unused recovery codes left.' });
    assert.deepEqual(left(1), { on: true, codesLeft: '1', codesLeftText: 'You have 1 unused recovery code left.' });
    assert.deepEqual(left(0), { on: true, codesLeft: '0', codesLeftText: 'You have no unused recovery codes left: make new ones below.' });
  });

  it('new recovery codes are shown once, and a refusal is the page’s error', () => {
    const codes = ['abcd-efgh', 'jkmn-pqrs'];
    const view = presentTwoFactor(me, { on: true, recoveryCodesLeft: 10 }, { recoveryCodes: codes, error: 'The code is not right.' });
    assert.deepEqual([view.recoveryCodes, view.error], [codes, 'The code is not right.']);
  });
});

describe('the team (views.team)', () => {
  const view = presentTeam(teamAnswer, me);

  it('members: ids as text, two-factor as on/off, the last sign-in as <time> (— when never)', () => {
    assert.deepEqual(
      view.members.map((m) => [m.id, m.email, m.role, m.twoFactor, m.lastSignIn]),
      [
        ['7100000000001', 'boss@example.com', 'admin', 'on', AT_TIME],
        ['7100000000003', 'dev@example.com', 'developer', 'on', AT_TIME],
        ['7100000000004', 'view<er>@example.com', 'viewer', 'off', '—'],
      ],
    );
  });

  it('the model carries no secret of a member (password hash, authenticator keys)', () => {
    const text = JSON.stringify(view);
    for (const secret of ['scrypt$secret-hash', 'PENDINGSECRET', 'BOSSSECRET', 'DEVSECRET', 'token-hash']) assert.ok(!text.includes(secret), secret);
  });

  it('each member’s role form: where it posts, the roles with theirs selected', () => {
    const dev = view.members[1];
    assert.equal(dev.roleAction, '/manager/team/7100000000003/role');
    assert.deepEqual(dev.roles, [
      { value: 'admin', selected: false },
      { value: 'developer', selected: true },
      { value: 'viewer', selected: false },
    ]);
  });

  it('the actions on someone else: none on the admin’s own row; resetting two-factor only while it is on', () => {
    const [own, dev, viewer] = view.members;
    assert.equal(own.others, null);
    assert.deepEqual(dev.others, {
      resetPassword: '/manager/team/7100000000003/reset-password',
      resetTwoFactor: '/manager/team/7100000000003/reset-two-factor',
      remove: '/manager/team/7100000000003/remove',
    });
    assert.deepEqual(viewer.others, {
      resetPassword: '/manager/team/7100000000004/reset-password',
      resetTwoFactor: null,
      remove: '/manager/team/7100000000004/remove',
    });
  });

  it('open invitations: until when as <time>, the cancel form’s target; none is an empty list', () => {
    assert.deepEqual(view.invitations, [
      { id: '6', email: 'new@example.com', role: 'viewer', until: LATER_TIME, revoke: '/manager/team/invitations/6/revoke' },
    ]);
    assert.deepEqual(presentTeam({ ...teamAnswer, invitations: [] }, me).invitations, []);
  });

  it('the invitation form offers every role, developer first chosen', () => {
    assert.deepEqual(
      view.inviteRoles.filter((r) => r.selected).map((r) => r.value),
      ['developer'],
    );
    assert.equal(view.inviteRoles.length, 3);
  });

  it('the two-factor requirement in words, and the form sends the other state', () => {
    assert.deepEqual(view.requirement, { state: 'off', word: 'optional', send: 'on', button: 'Require it' });
    assert.equal(view.afterReset, '');
    const required = presentTeam({ ...teamAnswer, requireTwoFactor: true }, me);
    assert.deepEqual(required.requirement, { state: 'on', word: 'required', send: 'off', button: 'Make it optional' });
    assert.equal(required.afterReset, ' (at once: the team requires it)');
  });

  it('the business is named; one-time links are shown only when given', () => {
    assert.equal(view.merchant, 'Acme <&> "Shop"');
    assert.deepEqual([view.invited, view.reset], [null, null]);
    const link = { email: 'new@example.com', url: `http://localhost/manager/invitations/${TOKEN}` };
    const shown = presentTeam(teamAnswer, me, { invited: link });
    assert.deepEqual([shown.invited, shown.reset], [link, null]);
  });
});

describe('the templates of these views read only their model and the frame', () => {
  const web = path.join(import.meta.dirname, '../../src/web');
  const FRAME: readonly (keyof Frame | keyof PageModel)[] = ['chrome', 'csrf', 'formKey', 'notice', 'title'];
  const onDuty = { on: true as const, recoveryCodesLeft: 3 };
  const enrolling = { on: false as const, pending: { secret: 'S', uri: 'otpauth://x' }, qrSvg: '<svg></svg>' };
  // Every model a view can get (both states of two-factor): the fields a template may read.
  const models: Record<string, readonly object[]> = {
    'sign-in': [presentManagerSignIn('', null)],
    code: [presentManagerCode()],
    invitation: [presentInvitation({ email: 'a@example.com', role: 'viewer', merchant_name: 'A' }, TOKEN)],
    'password-reset': [presentManagerPasswordReset({ email: 'a@example.com', merchant_name: 'A' }, TOKEN)],
    account: [presentManagerAccount(me, [])],
    'two-factor': [presentTwoFactor(me, onDuty), presentTwoFactor(me, enrolling)],
    team: [presentTeam(teamAnswer, me)],
  };

  for (const [name, variants] of Object.entries(models)) {
    it(`${name}: registered typed; every it.<field> is a model or frame field; no time or money formatted`, () => {
      const spec = MANAGER_VIEWS[name as keyof typeof MANAGER_VIEWS];
      const text = fs.readFileSync(path.join(web, `${spec.template}.eta`), 'utf8');
      assert.doesNotMatch(text, /toFixed|toLocale|it\.time\(|\/ 100|new Date/);
      const allowed = new Set<string>([...FRAME, ...variants.flatMap((m) => Object.keys(m))]);
      const read = [...text.matchAll(/\bit\.([A-Za-z_$][\w$]*)/g)].map((m) => m[1]);
      assert.ok(read.length > 0);
      for (const field of read) assert.ok(allowed.has(field), `${spec.template} reads it.${field}, not in its model`);
    });
  }
});
