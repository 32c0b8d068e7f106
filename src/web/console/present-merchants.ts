import type { RefundRecord } from '../../schemas/refunds.ts';
import type { ListCounts } from '../list-counts.ts';
import { countsText } from '../list-counts.ts';
import type { Instant } from '../times.ts';
import {
  listTools,
  money,
  moneyFromCents,
  moment,
  presentEditConflict,
  query,
  statusWords,
  transactionRow,
  type Choice,
  type EditConflictView,
  type EmptyState,
  type Fact,
  type Link,
  type ListTools,
  type TableView,
  type TransactionRecord,
} from '../shared/present.ts';
import type { Html, PageModel } from '../shared/views.ts';
import { accountFigures, merchantLink } from './present.ts';

/**
 * The console's merchant pages and the list of every refund (issue 30, rule 3): the typed models
 * of views.merchants, views.merchant and views['refund-list'], and the presenters that build them
 * from what the services return; money, times, ids and links become text here, never in a
 * template. Unit tests: test/unit/web-presenters-merchants.test.ts.
 */

const PREFIX = '/console';
const MERCHANTS = `${PREFIX}/merchants`;

// ---- views.merchants: every merchant, and the form creating one.

/** A merchant as the list has it. */
export interface MerchantListed {
  id: string | number;
  name: string;
  status: string;
  createdAt: Instant;
}

/** views.merchants: every merchant (by id), and for a role that writes the create form with its duplicate-name warning. */
export interface MerchantsView extends PageModel {
  create: {
    action: string;
    /** The name asked for already exists: what to show before creating it anyway. */
    duplicate: {
      /** The name as the warning quotes it (trimmed). */
      name: string;
      /** The name field's value (as typed). */
      value: string;
      same: { link: Link; detail: string }[];
    } | null;
  } | null;
  merchants: TableView;
}

export function presentMerchants(
  merchants: readonly MerchantListed[],
  { canWrite, duplicate }: { canWrite: boolean; duplicate: { name: string; same: readonly { id: string; name: string; status: string }[] } | null },
): MerchantsView {
  return {
    title: 'Merchants',
    create: canWrite
      ? {
          action: MERCHANTS,
          duplicate: duplicate && {
            name: duplicate.name.trim(),
            value: duplicate.name,
            same: duplicate.same.map((m) => ({ link: { href: `${MERCHANTS}/${m.id}`, text: m.name }, detail: `(id ${m.id}, ${m.status})` })),
          },
        }
      : null,
    merchants: {
      label: { text: 'Merchants' },
      caption: 'Merchants',
      columns: ['Id', 'Name', 'Status', 'Created'],
      rows: merchants.map((m) => ({
        data: { name: 'merchant', value: String(m.id) },
        cells: [{ href: `${MERCHANTS}/${m.id}`, text: String(m.id) }, m.name, m.status, { html: moment(m.createdAt) }],
      })),
      empty: { text: 'No merchants yet.' },
    },
  };
}

// ---- views.merchant: one merchant, its credentials, money and business manager users.

/** What merchant-credentials.service.ts `merchantCredentials` returns (the merchant, a page of its clients and of its tokens). */
export interface MerchantCredentials {
  merchant: { id: string; name: string; status: string; clientId: string; requireTwoFactor: boolean; createdAt: string };
  position: { tokensBefore: string; clientsAfter: string };
  tokensPage: { counts: ListCounts; next: string | null };
  clientsPage: { counts: ListCounts; next: string | null };
  clients: readonly {
    id: string;
    clientId: string;
    name: string;
    createdAt: string;
    rotatedAt: string | null;
    lastUsedAt: string | null;
    revokedAt: string | null;
    state: string;
  }[];
  tokens: readonly {
    id: string;
    kind: string;
    environment: string;
    scopes: readonly string[];
    createdAt: string;
    expiresAt: string | null;
    revokedAt: string | null;
    state: string;
  }[];
}

/** What merchant-credentials.service.ts `merchantTeam` returns: the business manager's users and open invitations. */
export interface MerchantTeam {
  members: readonly {
    id: string;
    email: string;
    role: string;
    twoFactor: string;
    canResetTwoFactor: boolean;
    lastSignInAt: string | null;
    createdAt: string;
  }[];
  invitations: readonly { id: string; email: string; role: string; createdAt: string; expiresAt: string }[];
}

/** How much of a rate limit the merchant is using (http/rate-limit.ts `merchantBucketUse`). */
interface BucketUse {
  available: number;
  capacity: number;
  perSecond: number;
}

/** One environment's account (account.presenter.ts `presentAccount`) with its newest transactions. */
export interface MerchantAccountInput {
  environment: string;
  currency: string;
  balance: number;
  creditLimit: number;
  available: number;
  billingMode: string;
  lowBalanceThreshold: number | null;
  /** The terms' version (ledger_accounts.terms_version): the terms form's hidden `version`. */
  termsVersion: number;
  /** The account of this server's environment. */
  current: boolean;
  transactions: readonly TransactionRecord[];
  /** How many transactions the account has, counted up to `countCap`. */
  total: number;
  /** Set when there are more than the ones shown. */
  nextCursor: string | null;
}

/** A secret shown once on the page, right after the form that made it (pages/merchants.ts). */
export interface ShownSecret {
  title: string;
  /** `OAuth client secret`, `bearer token`, `invitation link`. */
  what: string;
  fields: { label: string; value: string; secret: boolean }[];
}

/**
 * A money form the services refused (pages/merchants.ts): which form of which environment, why
 * (with the numbers), the fields to mark, and what was typed, so the page shows it again in place.
 */
export interface MoneyFormRefusal {
  environment: string;
  form: 'topUp' | 'adjust' | 'terms';
  message: string;
  /** The form's field names the refusal is about (`aria-invalid`). */
  invalid: readonly string[];
  values: Record<string, string>;
}

/** A money form's state when the page is shown again after a refusal: the reason, the fields it names, what was typed. */
export interface MoneyFormState {
  refused: string | null;
  /** The form's fields the refusal names (`aria-invalid`). */
  invalid: Record<string, boolean>;
  values: Record<string, string>;
}

/** One environment's account on the merchant page: its figures, newest transactions and (owners) the money forms. */
export interface MerchantAccountView {
  environment: string;
  /** The account's currency, which its amounts are in (the table's headings say it). */
  currency: string;
  /** `test account (this server)`. */
  heading: string;
  facts: Fact[];
  transactions: {
    id: string;
    when: Html;
    type: string;
    amount: string;
    balanceAfter: string;
    /** `order 12`, linking the order. */
    order: Link | null;
    refundNo: string | null;
    /** What the transaction is for when it is for no order. */
    description: string | null;
  }[];
  empty: EmptyState;
  /** `All 25 transactions` (more than the ones shown). */
  all: Link | null;
  forms: {
    topUp: string;
    adjust: string;
    terms: string;
    currency: string;
    billingModes: (Choice & { label: string })[];
    creditLimit: string;
    /** Blank for no threshold. */
    threshold: string;
    topUpState: MoneyFormState;
    adjustState: MoneyFormState;
    termsState: MoneyFormState;
    /** The terms version the form is read at. */
    version: string;
  } | null;
}

/** views.merchant: one merchant with its credentials, rate limits, accounts and business manager users. */
export interface MerchantView extends PageModel {
  id: string;
  name: string;
  back: string;
  secret: ShownSecret | null;
  status: string;
  clientId: string;
  created: Html;
  /** The Disable form's action (a role that writes, an active merchant). */
  disable: string | null;
  /** The Enable form's action (a role that writes, a disabled merchant). */
  enable: string | null;
  /** Null when the buckets cannot be read right now. */
  rateLimit: Fact[] | null;
  accounts: MerchantAccountView[];
  clients: {
    counts: string;
    rows: {
      id: string;
      name: string;
      clientId: string;
      created: Html;
      rotated: Html;
      lastUsed: Html;
      /** The state's code (the cell's data-state) and its words. */
      state: string;
      stateText: string;
      revoked: Html | null;
    }[];
    empty: EmptyState;
    /** Back to the first page of clients. */
    first: string | null;
    more: string | null;
  };
  tokens: {
    /** The Issue a token form (a role that writes): its action and the scopes, read ones ticked. */
    issue: { action: string; scopes: { value: string; checked: boolean }[] } | null;
    /** `1–20 of 45`. */
    counts: string;
    /** An Action column (a role that writes). */
    actions: boolean;
    rows: {
      id: string;
      kind: string;
      environment: string;
      scopes: string;
      issued: Html;
      expires: Html;
      state: string;
      stateText: string;
      revoked: Html | null;
      /** The Revoke form's action (an active token, a role that writes). */
      revoke: string | null;
    }[];
    empty: EmptyState;
    /** Back to the newest tokens. */
    newest: string | null;
    older: string | null;
  };
  team: {
    /** An Action column (a role that writes). */
    actions: boolean;
    members: {
      id: string;
      email: string;
      role: string;
      twoFactor: string;
      lastSignIn: Html;
      since: Html;
      /** The reset's form action (a second factor set up, a role that writes) and what happens next. */
      resetTwoFactor: { action: string; nextSignIn: string } | null;
      remove: string | null;
    }[];
    membersEmpty: EmptyState;
    invitations: {
      id: string;
      email: string;
      role: string;
      sent: Html;
      validUntil: Html;
      resend: string | null;
      cancel: string | null;
    }[];
    invitationsEmpty: EmptyState;
    /** The Invite a user form's action (a role that writes). */
    invite: string | null;
  };
}

const BILLING_MODES = [
  { value: 'on_account', label: 'on account (no limit)' },
  { value: 'prepaid', label: 'prepaid (orders need available funds)' },
];

function accountView(
  a: MerchantAccountInput,
  base: string,
  { canWrite, countCap, refusal }: { canWrite: boolean; countCap: number; refusal: MoneyFormRefusal | null },
): MerchantAccountView {
  const shown = accountFigures(a);
  const state = (form: MoneyFormRefusal['form'], values: Record<string, string>): MoneyFormState =>
    refusal && refusal.environment === a.environment && refusal.form === form
      ? { refused: refusal.message, invalid: Object.fromEntries(refusal.invalid.map((f) => [f, true])), values: { ...values, ...refusal.values } }
      : { refused: null, invalid: {}, values };
  const termsState = state('terms', {});
  return {
    environment: a.environment,
    currency: a.currency,
    heading: `${a.environment} account${a.current ? ' (this server)' : ''}`,
    facts: [
      { label: 'Balance', field: 'balance', num: true, text: shown.balance },
      { label: 'Billing mode', field: 'billing-mode', text: a.billingMode === 'prepaid' ? 'prepaid' : 'on account' },
      { label: 'Credit limit', field: 'credit-limit', num: true, text: shown.creditLimit },
      { label: 'Available', field: 'available', num: true, text: shown.available },
      { label: 'Low-balance threshold', num: true, text: shown.threshold },
    ],
    transactions: a.transactions.map((t) => {
      const row = transactionRow(t);
      return {
        id: row.id,
        when: row.when,
        type: row.type,
        amount: row.amount,
        balanceAfter: row.balanceAfter,
        order: t.orderId ? { href: `${PREFIX}/orders/${t.orderId}`, text: `order ${t.orderId}` } : null,
        refundNo: t.refundNo,
        description: t.orderId ? null : t.description,
      };
    }),
    empty: { text: 'No transactions yet.' },
    all: a.nextCursor
      ? {
          href: `${base}/transactions?${query({ environment: a.environment })}`,
          text: `All ${a.total >= countCap ? `${countCap.toLocaleString('en')}+` : a.total} transactions`,
        }
      : null,
    forms: canWrite
      ? {
          topUp: `${base}/account/top-ups`,
          adjust: `${base}/account/adjustments`,
          terms: `${base}/account`,
          currency: a.currency,
          billingModes: BILLING_MODES.map((m) => ({ ...m, selected: m.value === (termsState.values.billingMode ?? a.billingMode) })),
          creditLimit: termsState.values.creditLimit ?? shown.creditLimit,
          threshold: termsState.values.lowBalanceThreshold ?? shown.thresholdField,
          topUpState: state('topUp', { amount: '', reference: '' }),
          adjustState: state('adjust', { amount: '', reason: '' }),
          termsState,
          version: String(a.termsVersion),
        }
      : null,
  };
}

export function presentMerchant(
  { merchant: m, position, tokensPage, clientsPage, clients, tokens }: MerchantCredentials,
  {
    team,
    rateLimit,
    accounts,
    secret,
    scopes,
    readScopes,
    canWrite,
    countCap,
    refusal = null,
  }: {
    team: MerchantTeam;
    rateLimit: { requests: BucketUse; body: BucketUse | null } | null;
    accounts: readonly MerchantAccountInput[];
    secret: ShownSecret | null;
    /** Every scope a token may have, and those ticked to start with. */
    scopes: readonly string[];
    readScopes: readonly string[];
    canWrite: boolean;
    /** Where an account's transaction count stops (`All 10,000+ transactions`). */
    countCap: number;
    /** A money form just refused: shown again in place with the reason. */
    refusal?: MoneyFormRefusal | null;
  },
): MerchantView {
  const base = `${MERCHANTS}/${m.id}`;
  const at = (fields: Record<string, string>, anchor: string) => `${base}?${query(fields)}#${anchor}`;
  const use = (b: BucketUse) => `${Math.floor(b.available)} of ${b.capacity}`;
  return {
    title: `Merchant ${m.name}`,
    id: m.id,
    name: m.name,
    back: MERCHANTS,
    secret: secret && { title: secret.title, what: secret.what, fields: secret.fields },
    status: statusWords(m.status),
    clientId: m.clientId,
    created: moment(m.createdAt),
    disable: canWrite && m.status === 'active' ? `${base}/disable` : null,
    enable: canWrite && m.status !== 'active' ? `${base}/enable` : null,
    rateLimit: rateLimit && [
      { label: 'Requests available', field: 'requests-available', text: use(rateLimit.requests) },
      { label: 'Refill', text: `${rateLimit.requests.perSecond} a second` },
      ...(rateLimit.body ? [{ label: 'Body bytes available', field: 'body-available', text: use(rateLimit.body) }] : []),
    ],
    accounts: accounts.map((a) => accountView(a, base, { canWrite, countCap, refusal })),
    clients: {
      counts: countsText(clientsPage.counts),
      rows: clients.map((c) => ({
        id: c.id,
        name: c.name,
        clientId: c.clientId,
        created: moment(c.createdAt),
        rotated: moment(c.rotatedAt, 'never'),
        lastUsed: moment(c.lastUsedAt, 'never'),
        state: c.state,
        stateText: statusWords(c.state),
        revoked: c.revokedAt ? moment(c.revokedAt) : null,
      })),
      empty: { text: 'No clients.' },
      first: position.clientsAfter ? at({ tokensBefore: position.tokensBefore }, 'clients') : null,
      more: clientsPage.next ? at({ tokensBefore: position.tokensBefore, clientsAfter: clientsPage.next }, 'clients') : null,
    },
    tokens: {
      issue: canWrite ? { action: `${base}/tokens`, scopes: scopes.map((value) => ({ value, checked: readScopes.includes(value) })) } : null,
      counts: countsText(tokensPage.counts),
      actions: canWrite,
      rows: tokens.map((t) => ({
        id: t.id,
        kind: t.kind,
        environment: t.environment,
        scopes: t.scopes.join(' '),
        issued: moment(t.createdAt),
        expires: moment(t.expiresAt, 'never'),
        state: t.state,
        stateText: statusWords(t.state),
        revoked: t.revokedAt ? moment(t.revokedAt) : null,
        revoke: canWrite && t.state === 'active' ? `${base}/tokens/${t.id}/revoke` : null,
      })),
      empty: { text: 'No tokens.' },
      newest: position.tokensBefore ? at({ clientsAfter: position.clientsAfter }, 'tokens') : null,
      older: tokensPage.next ? at({ clientsAfter: position.clientsAfter, tokensBefore: tokensPage.next }, 'tokens') : null,
    },
    team: {
      actions: canWrite,
      members: team.members.map((u) => ({
        id: u.id,
        email: u.email,
        role: u.role,
        twoFactor: u.twoFactor,
        lastSignIn: moment(u.lastSignInAt, 'never'),
        since: moment(u.createdAt),
        resetTwoFactor:
          canWrite && u.canResetTwoFactor
            ? {
                action: `${base}/users/${u.id}/reset-two-factor`,
                nextSignIn: `The next sign-in asks for the password only${m.requireTwoFactor ? ', then for setting up an app again (this merchant requires two-factor)' : ''}.`,
              }
            : null,
        remove: canWrite ? `${base}/users/${u.id}/remove` : null,
      })),
      membersEmpty: { text: 'No users yet.' },
      invitations: team.invitations.map((i) => ({
        id: i.id,
        email: i.email,
        role: i.role,
        sent: moment(i.createdAt),
        validUntil: moment(i.expiresAt),
        resend: canWrite ? `${base}/invitations/${i.id}/resend` : null,
        cancel: canWrite ? `${base}/invitations/${i.id}/cancel` : null,
      })),
      invitationsEmpty: { text: 'No pending invitations.' },
      invite: canWrite ? `${base}/users` : null,
    },
  };
}

// ---- views['refund-list']: every refund of every merchant, newest first.

/** What refund-search.service.ts `searchRefundsForOperator` returns. */
export interface RefundSearchAnswer {
  filters: { status: string; merchant: string; from: string; to: string };
  merchant: { id: string; name: string } | null;
  list: readonly (RefundRecord & { merchantId: string; merchantName: string; decidedBy: string | null; decidedAt: number | null })[];
  after: string | null;
  counts: ListCounts;
}

/** views['refund-list']: the filters as typed, the merchant filtered on, where the page stands, the refunds found and the next page's link. */
export interface RefundListView extends PageModel {
  filters: RefundSearchAnswer['filters'];
  statuses: Choice[];
  /** The merchant the list is narrowed to. */
  merchant: Link | null;
  tools: ListTools;
  rows: {
    refundNo: string;
    order: Link;
    merchant: Link;
    requested: Html;
    items: string;
    amount: string;
    status: string;
    /** The status and, for a failed refund, why: `refund_failed: card expired`. */
    statusText: string;
    /** When it was decided and by whom (`automatically`, `by the operator`). */
    decided: { when: Html; by: string } | null;
  }[];
  empty: EmptyState;
  next: string | null;
}

export function presentRefundList(
  { filters, merchant, list, after, counts }: RefundSearchAnswer,
  statuses: readonly string[],
  currency: string,
): RefundListView {
  const all = `${PREFIX}/refunds/all`;
  return {
    title: 'All refunds',
    filters,
    statuses: statuses.map((value) => ({ value, selected: value === filters.status, text: statusWords(value) })),
    merchant: merchant && { href: `${MERCHANTS}/${merchant.id}`, text: merchant.name },
    tools: listTools(counts, `${all}.csv?${query(filters)}`),
    rows: list.map((r) => ({
      refundNo: r.refundNo,
      order: { href: `${PREFIX}/orders/${r.id}`, text: r.id },
      merchant: merchantLink(r.merchantId, r.merchantName),
      requested: moment(r.createDate),
      items: r.items.map((i) => `${i.skuCode} × ${i.quantity}`).join(', '),
      amount: money(r.amount, currency),
      status: r.refundStatus,
      statusText: r.failureReason ? `${statusWords(r.refundStatus)}: ${r.failureReason}` : statusWords(r.refundStatus),
      decided: r.decidedAt ? { when: moment(r.decidedAt), by: r.decidedBy === 'auto' ? 'automatically' : 'by the operator' } : null,
    })),
    empty: { text: 'No refunds match.' },
    next: after ? `${all}?${query({ ...filters, after })}` : null,
  };
}

const billingModeText = (mode: string | undefined) => BILLING_MODES.find((m) => m.value === mode)?.label ?? mode ?? '';

/**
 * The billing terms form sent against an older terms version, beside the terms stored now
 * (docs/web.md, "Edit conflicts"): the page's "save mine" sends the same terms, made against them.
 */
export function presentTermsConflict(
  merchantId: number,
  sent: { environment: string; billingMode: string; creditLimit: string; lowBalanceThreshold?: string },
  stored: { billingMode: string; creditLimitCents: number; lowBalanceThresholdCents: number | null; termsVersion: number },
): EditConflictView {
  const base = `${PREFIX}/merchants/${encodeURIComponent(merchantId)}`;
  return presentEditConflict({
    what: `The ${sent.environment} account's billing terms`,
    action: `${base}/account`,
    discard: { href: `${base}#account-${sent.environment}`, text: 'Discard mine and see the stored terms' },
    storedVersion: stored.termsVersion,
    extra: [{ name: 'environment', value: sent.environment }],
    fields: [
      {
        name: 'billingMode',
        label: 'Billing mode',
        yours: sent.billingMode,
        stored: stored.billingMode,
        shown: { yours: billingModeText(sent.billingMode), stored: billingModeText(stored.billingMode) },
      },
      { name: 'creditLimit', label: 'Credit limit', yours: sent.creditLimit, stored: moneyFromCents(stored.creditLimitCents), compare: 'number' },
      {
        name: 'lowBalanceThreshold',
        label: 'Low-balance threshold',
        yours: sent.lowBalanceThreshold ?? '',
        stored: stored.lowBalanceThresholdCents === null ? '' : moneyFromCents(stored.lowBalanceThresholdCents),
        compare: 'number',
      },
    ],
  });
}

/** An account as the notices after its forms read it (the store's row, or the part of it they need). */
interface AccountFigures {
  balance_cents: number;
  currency: string;
  billing_mode: string;
  credit_limit_cents: number;
  low_balance_threshold_cents: number | null;
}

/**
 * The notice after a top-up or an adjustment (issue 44, 7): what was posted, to which environment's
 * account, and the balance it left; a repeated top-up reference says nothing moved.
 */
export function postingNotice(
  kind: 'top_up' | 'adjustment',
  environment: string,
  result: { replayed: boolean; entry: { amount_cents: number }; account: AccountFigures },
): string {
  const balance = moneyFromCents(result.account.balance_cents, result.account.currency);
  if (result.replayed)
    return kind === 'top_up'
      ? `That top-up's reference is recorded already: nothing posted. The ${environment} balance stays ${balance}.`
      : `That adjustment was posted already: nothing posted again. The ${environment} balance stays ${balance}.`;
  const amount = moneyFromCents(Number(result.entry.amount_cents), result.account.currency);
  return `${kind === 'top_up' ? 'Top-up' : 'Adjustment'} of ${amount} posted to the ${environment} account. Balance now ${balance}.`;
}

/** The notice after the billing terms are saved (issue 44, 7): the terms as they now stand. */
export function termsNotice(environment: string, account: AccountFigures): string {
  const threshold = account.low_balance_threshold_cents === null ? 'none' : moneyFromCents(account.low_balance_threshold_cents, account.currency);
  return `Billing terms of the ${environment} account saved: ${account.billing_mode === 'prepaid' ? 'prepaid' : 'on account'}, credit limit ${moneyFromCents(account.credit_limit_cents, account.currency)}, low-balance notice ${threshold}.`;
}
