import type { EditConflictView } from '../shared/present.ts';
import { typedView, type ErrorView, type ModelsOf } from '../shared/views.ts';
import type { ManagerAuditView, BalanceView, ManagerOrdersView, ManagerOrderView } from './present.ts';
import type {
  InvitationView,
  ManagerAccountView,
  ManagerCodeView,
  ManagerPasswordResetView,
  ManagerSignInView,
  TeamView,
  TwoFactorView,
} from './present-team.ts';
import type { ClaimFormView, ManagerClaimsView, ManagerClaimView } from './present-claims.ts';
import type { CredentialsView, GetStartedView, UsageView, WebhookLogView, WebhooksView, WebhookView } from './present-integrations.ts';

const at = (name: string) => `manager/views/${name}`;

/**
 * The business manager's views (issue 30, rule 3): name → template and model, as CONSOLE_VIEWS;
 * models built by manager/present.ts (orders, balance, audit), present-team.ts (sign-in, account,
 * team, two-factor, invitations) and present-integrations.ts (get started, usage, credentials,
 * webhooks) and present-claims.ts (claims).
 */
export const MANAGER_VIEWS = {
  error: typedView<ErrorView>('shared/views/error'),
  'edit-conflict': typedView<EditConflictView>('shared/views/edit-conflict'),
  order: typedView<ManagerOrderView>(at('order')),
  claim: typedView<ManagerClaimView>(at('claim')),
  'claim-form': typedView<ClaimFormView>(at('claim-form')),
  claims: typedView<ManagerClaimsView>(at('claims')),
  orders: typedView<ManagerOrdersView>(at('orders')),
  account: typedView<ManagerAccountView>(at('account')),
  audit: typedView<ManagerAuditView>(at('audit')),
  balance: typedView<BalanceView>(at('balance')),
  code: typedView<ManagerCodeView>(at('code')),
  credentials: typedView<CredentialsView>(at('credentials')),
  invitation: typedView<InvitationView>(at('invitation')),
  overview: typedView<GetStartedView>(at('overview')),
  'password-reset': typedView<ManagerPasswordResetView>(at('password-reset')),
  'sign-in': typedView<ManagerSignInView>(at('sign-in')),
  team: typedView<TeamView>(at('team')),
  'two-factor': typedView<TwoFactorView>(at('two-factor')),
  usage: typedView<UsageView>(at('usage')),
  webhook: typedView<WebhookView>(at('webhook')),
  webhooks: typedView<WebhooksView>(at('webhooks')),
  'webhook-log': typedView<WebhookLogView>(at('webhook-log')),
};

export type ManagerViews = ModelsOf<typeof MANAGER_VIEWS>;
