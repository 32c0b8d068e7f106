import { MERCHANT_ROLES, type MerchantRole } from '../../domain/merchant-users.ts';
import type { ManagerUser, SignInChoice } from '../../services/manager-sessions.service.ts';
import type { InvitationRow, MerchantUserRow } from '../../store/merchant-users.repository.ts';
import { moment, type Choice } from '../shared/present.ts';
import type { Html, PageModel } from '../shared/views.ts';

/**
 * The business manager's presenters of who signs in and who is on the team (issue 30, rule 3):
 * the typed models of views `sign-in`, `code`, `invitation`, `password-reset`, `account`,
 * `two-factor` and `team` (manager/views.ts). Ids, times and the words a state is shown with
 * become text here; a template only places them. Unit tests: test/unit/web-presenters-team.test.ts.
 */

const PREFIX = '/manager';
const TEAM = `${PREFIX}/team`;

/** An option of a `<select>` whose label is not its value. */
export interface Option {
  value: string;
  label: string;
}

// ---- Signing in.

/** views['sign-in']: email and password; the business to sign in to when they open more than one. */
export interface ManagerSignInView extends PageModel {
  /** What was typed, kept on a refusal (empty at first). */
  email: string;
  error: string | null;
  /** The businesses the email and password open (the form asks which), or null. */
  businesses: Option[] | null;
  /** What a write that ended the session did (a password reset, signing out everywhere), or null. */
  done: string | null;
}

export const presentManagerSignIn = (
  email: string,
  error: string | null,
  choices: readonly SignInChoice[] | null = null,
  done: string | null = null,
): ManagerSignInView => ({
  title: 'Sign in',
  email,
  error,
  businesses: choices ? choices.map((c) => ({ value: String(c.merchantId), label: c.merchantName })) : null,
  done,
});

/** views.code: the second step of a sign-in, a code from the app or a recovery code. */
export interface ManagerCodeView extends PageModel {
  error: string | null;
}

export const presentManagerCode = (error: string | null = null): ManagerCodeView => ({ title: 'Two-factor code', error });

/** views.invitation: an invitation link's page, where the invited person chooses a password. */
export interface InvitationView extends PageModel {
  /** The business they are invited to. */
  merchant: string;
  role: string;
  email: string;
  /** Where the form posts: the link itself. */
  action: string;
  error: string | null;
}

export const presentInvitation = (
  invitation: Pick<InvitationRow, 'email' | 'role'> & { merchant_name: string },
  token: string,
  error: string | null = null,
): InvitationView => ({
  title: `Join ${invitation.merchant_name}`,
  merchant: invitation.merchant_name,
  role: invitation.role,
  email: invitation.email,
  action: `${PREFIX}/invitations/${token}`,
  error,
});

/** views['password-reset']: a reset link's page, where the account's new password is chosen. */
export interface ManagerPasswordResetView extends PageModel {
  /** The account's address and its business. */
  email: string;
  merchant: string;
  /** Where the form posts: the link itself. */
  action: string;
  error: string | null;
}

export const presentManagerPasswordReset = (
  reset: { email: string; merchant_name: string },
  token: string,
  error: string | null = null,
): ManagerPasswordResetView => ({
  title: 'Choose a new password',
  email: reset.email,
  merchant: reset.merchant_name,
  action: `${PREFIX}/password-reset/${token}`,
  error,
});

// ---- Your account.

/** A session as services/manager-sessions.service.ts `mySessions` gives it. */
export interface SessionRecord {
  current: boolean;
  stage: 'password' | 'complete';
  address: string | null;
  createdAt: number;
  lastSeenAt: number;
}

/** A row of "Where you are signed in". */
export interface SessionRow {
  /** The session asking (`data-current`). */
  current: boolean;
  signedIn: Html;
  lastActive: Html;
  address: string;
  /** `this session`, `waiting for a two-factor code` or `signed in`. */
  state: string;
}

/** views.account: change the password, the account's sessions, sign out everywhere. */
export interface ManagerAccountView extends PageModel {
  /** The account's address: the password form names it for password managers. */
  username: string;
  error: string | null;
  sessions: SessionRow[];
}

const sessionRow = (s: SessionRecord): SessionRow => ({
  current: s.current,
  signedIn: moment(s.createdAt),
  lastActive: moment(s.lastSeenAt),
  address: s.address ?? '—',
  state: s.current ? 'this session' : s.stage === 'password' ? 'waiting for a two-factor code' : 'signed in',
});

export const presentManagerAccount = (
  user: Pick<ManagerUser, 'email'>,
  sessions: readonly SessionRecord[],
  error: string | null = null,
): ManagerAccountView => ({
  title: 'Your account',
  username: user.email,
  error,
  sessions: sessions.map(sessionRow),
});

// ---- Two-factor sign-in.

/** Two-factor is on: how many recovery codes are left. */
export interface TwoFactorOn {
  on: true;
  /** The count, for `data-recovery-codes-left`. */
  codesLeft: string;
  /** `You have 3 unused recovery codes left.`, or what to do when none are. */
  codesLeftText: string;
}

/** Two-factor is off: the key to enrol, as a QR code, as text and as an otpauth:// link. */
export interface TwoFactorOff {
  on: false;
  /** The QR code's SVG (qr-code.ts), made from the key's link only. */
  qr: Html;
  secret: string;
  uri: string;
}

/** views['two-factor']: enrolment while it is off; the recovery codes while it is on. */
export interface TwoFactorView extends PageModel {
  /** The team requires two-factor and this user has not turned it on: the page says so first. */
  mustEnrol: boolean;
  error: string | null;
  /** New recovery codes, shown this once (after turning it on or making new ones), or null. */
  recoveryCodes: readonly string[] | null;
  state: TwoFactorOn | TwoFactorOff;
}

const codesLeftText = (left: number) =>
  left === 0 ? 'You have no unused recovery codes left: make new ones below.' : `You have ${left} unused recovery code${left === 1 ? '' : 's'} left.`;

export function presentTwoFactor(
  user: Pick<ManagerUser, 'mustEnrol'>,
  state: { on: true; recoveryCodesLeft: number } | { on: false; pending: { secret: string; uri: string }; qrSvg: string },
  shown: { error?: string | null; recoveryCodes?: readonly string[] | null } = {},
): TwoFactorView {
  return {
    title: 'Two-factor sign-in',
    mustEnrol: user.mustEnrol && !state.on,
    error: shown.error ?? null,
    recoveryCodes: shown.recoveryCodes ?? null,
    state: state.on
      ? { on: true, codesLeft: String(state.recoveryCodesLeft), codesLeftText: codesLeftText(state.recoveryCodesLeft) }
      : { on: false, qr: state.qrSvg as Html, secret: state.pending.secret, uri: state.pending.uri },
  };
}

// ---- Team (admins).

/** A one-time link (an invitation or a password reset) shown once on the team page: whom it is for and the link. */
export interface OneTimeLink {
  email: string;
  url: string;
}

/** A member's row: who, their role (and the form changing it), two-factor, the last sign-in, the actions on them. */
export interface TeamMemberRow {
  id: string;
  email: string;
  role: string;
  /** `on` or `off`. */
  twoFactor: string;
  lastSignIn: Html;
  /** Where the role form posts, and the roles to choose from (theirs selected). */
  roleAction: string;
  roles: Choice[];
  /**
   * What an admin may do to someone else, as the forms' targets: a password reset link, resetting
   * two-factor (null while it is off), removal. Null on the admin's own row.
   */
  others: { resetPassword: string; resetTwoFactor: string | null; remove: string } | null;
}

/** An open invitation: for whom, as what, until when, and where cancelling it posts. */
export interface InvitationRowView {
  id: string;
  email: string;
  role: string;
  until: Html;
  revoke: string;
}

/** views.team: the members, the open invitations, inviting, and whether two-factor is required. */
export interface TeamView extends PageModel {
  /** The business (removing a member says they can no longer sign in to it). */
  merchant: string;
  /** A reset link or an invitation link just made: shown this once, or null. */
  reset: OneTimeLink | null;
  invited: OneTimeLink | null;
  members: TeamMemberRow[];
  invitations: InvitationRowView[];
  /** The invitation form's roles (developer selected). */
  inviteRoles: Choice[];
  /** The two-factor requirement and the form that flips it. */
  requirement: {
    /** `on` or `off` (`data-require-two-factor`). */
    state: string;
    /** `required` or `optional`. */
    word: string;
    /** What the form sends (`required`): the other state. */
    send: string;
    button: string;
  };
  /** Said when resetting a member's two-factor: ` (at once: the team requires it)` when it is required, else nothing. */
  afterReset: string;
}

const roleChoices = (selected: MerchantRole | string): Choice[] => MERCHANT_ROLES.map((value) => ({ value, selected: value === selected }));

export function presentTeam(
  team: {
    members: readonly Pick<MerchantUserRow, 'id' | 'email' | 'role' | 'totp_secret' | 'last_sign_in_at'>[];
    invitations: readonly Pick<InvitationRow, 'id' | 'email' | 'role' | 'expires_at'>[];
    requireTwoFactor: boolean;
  },
  me: Pick<ManagerUser, 'userId' | 'merchantName'>,
  links: { invited?: OneTimeLink | null; reset?: OneTimeLink | null } = {},
): TeamView {
  const required = team.requireTwoFactor;
  return {
    title: 'Team',
    merchant: me.merchantName,
    reset: links.reset ?? null,
    invited: links.invited ?? null,
    members: team.members.map((m) => {
      const at = `${TEAM}/${m.id}`;
      return {
        id: String(m.id),
        email: m.email,
        role: m.role,
        twoFactor: m.totp_secret ? 'on' : 'off',
        lastSignIn: moment(m.last_sign_in_at),
        roleAction: `${at}/role`,
        roles: roleChoices(m.role),
        others:
          m.id === me.userId
            ? null
            : { resetPassword: `${at}/reset-password`, resetTwoFactor: m.totp_secret ? `${at}/reset-two-factor` : null, remove: `${at}/remove` },
      };
    }),
    invitations: team.invitations.map((i) => ({
      id: String(i.id),
      email: i.email,
      role: i.role,
      until: moment(i.expires_at),
      revoke: `${TEAM}/invitations/${i.id}/revoke`,
    })),
    inviteRoles: roleChoices('developer'),
    requirement: required
      ? { state: 'on', word: 'required', send: 'off', button: 'Make it optional' }
      : { state: 'off', word: 'optional', send: 'on', button: 'Require it' },
    afterReset: required ? ' (at once: the team requires it)' : '',
  };
}
