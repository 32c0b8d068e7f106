import { typedView, untypedView, type ErrorView, type ModelsOf } from '../shared/views.ts';
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

const at = (name: string) => `manager/views/${name}`;

/**
 * The business manager's views (issue 30, rule 3): name → template and model, as CONSOLE_VIEWS.
 * `untypedView` marks a view not converted yet (docs/web.md).
 */
export const MANAGER_VIEWS = {
  error: typedView<ErrorView>('shared/views/error'),
  order: typedView<ManagerOrderView>(at('order')),
  orders: typedView<ManagerOrdersView>(at('orders')),
  account: typedView<ManagerAccountView>(at('account')),
  audit: typedView<ManagerAuditView>(at('audit')),
  balance: typedView<BalanceView>(at('balance')),
  code: typedView<ManagerCodeView>(at('code')),
  credentials: untypedView(at('credentials')),
  invitation: typedView<InvitationView>(at('invitation')),
  overview: untypedView(at('overview')),
  'password-reset': typedView<ManagerPasswordResetView>(at('password-reset')),
  'sign-in': typedView<ManagerSignInView>(at('sign-in')),
  team: typedView<TeamView>(at('team')),
  'two-factor': typedView<TwoFactorView>(at('two-factor')),
  usage: untypedView(at('usage')),
  webhook: untypedView(at('webhook')),
  webhooks: untypedView(at('webhooks')),
  'webhook-log': untypedView(at('webhook-log')),
};

export type ManagerViews = ModelsOf<typeof MANAGER_VIEWS>;
