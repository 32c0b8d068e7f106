import { typedView, untypedView, type ErrorView, type ModelsOf } from '../shared/views.ts';
import type { ManagerAuditView, BalanceView, ManagerOrdersView, ManagerOrderView } from './present.ts';
import type { CredentialsView, GetStartedView, UsageView, WebhookLogView, WebhooksView, WebhookView } from './present-integrations.ts';

const at = (name: string) => `manager/views/${name}`;

/**
 * The business manager's views (issue 30, rule 3): name → template and model, as CONSOLE_VIEWS.
 * `untypedView` marks a view not converted yet (docs/web.md).
 */
export const MANAGER_VIEWS = {
  error: typedView<ErrorView>('shared/views/error'),
  order: typedView<ManagerOrderView>(at('order')),
  orders: typedView<ManagerOrdersView>(at('orders')),
  account: untypedView(at('account')),
  audit: typedView<ManagerAuditView>(at('audit')),
  balance: typedView<BalanceView>(at('balance')),
  code: untypedView(at('code')),
  credentials: typedView<CredentialsView>(at('credentials')),
  invitation: untypedView(at('invitation')),
  overview: typedView<GetStartedView>(at('overview')),
  'password-reset': untypedView(at('password-reset')),
  'sign-in': untypedView(at('sign-in')),
  team: untypedView(at('team')),
  'two-factor': untypedView(at('two-factor')),
  usage: typedView<UsageView>(at('usage')),
  webhook: typedView<WebhookView>(at('webhook')),
  webhooks: typedView<WebhooksView>(at('webhooks')),
  'webhook-log': typedView<WebhookLogView>(at('webhook-log')),
};

export type ManagerViews = ModelsOf<typeof MANAGER_VIEWS>;
