import { typedView, untypedView, type ErrorView, type ModelsOf } from '../shared/views.ts';
import type {
  ConsoleAuditView,
  ConsoleOrdersView,
  ConsoleOrderView,
  ConsoleRefundDecidedView,
  ProductsView,
  RefundQueueView,
  SplitCancelView,
  TransactionsView,
} from './present.ts';
import type { MerchantsView, MerchantView, RefundListView } from './present-merchants.ts';

const at = (name: string) => `console/views/${name}`;

/**
 * The console's views (issue 30, rule 3): name → template and model. `page(reply, status, name,
 * model)` takes only these names, each with its model's type; a typed model is built by a
 * presenter of console/present.ts. `untypedView` marks a view not converted yet (docs/web.md).
 */
export const CONSOLE_VIEWS = {
  error: typedView<ErrorView>('shared/views/error'),
  order: typedView<ConsoleOrderView>(at('order')),
  orders: typedView<ConsoleOrdersView>(at('orders')),
  account: untypedView(at('account')),
  audit: typedView<ConsoleAuditView>(at('audit')),
  dashboard: untypedView(at('dashboard')),
  import: untypedView(at('import')),
  'import-job': untypedView(at('import-job')),
  'import-preview': untypedView(at('import-preview')),
  channels: untypedView(at('channels')),
  'channel-form': untypedView(at('channel-form')),
  warehouses: untypedView(at('warehouses')),
  'warehouse-form': untypedView(at('warehouse-form')),
  'product-form': untypedView(at('product-form')),
  merchant: typedView<MerchantView>(at('merchant')),
  merchants: typedView<MerchantsView>(at('merchants')),
  'password-reset': untypedView(at('password-reset')),
  product: untypedView(at('product')),
  products: typedView<ProductsView>(at('products')),
  'refund-decided': typedView<ConsoleRefundDecidedView>(at('refund-decided')),
  refunds: typedView<RefundQueueView>(at('refunds')),
  'refund-list': typedView<RefundListView>(at('refund-list')),
  'sign-in': untypedView(at('sign-in')),
  'split-cancel': typedView<SplitCancelView>(at('split-cancel')),
  staff: untypedView(at('staff')),
  transactions: typedView<TransactionsView>(at('transactions')),
  webhook: untypedView(at('webhook')),
  webhooks: untypedView(at('webhooks')),
};

export type ConsoleViews = ModelsOf<typeof CONSOLE_VIEWS>;
