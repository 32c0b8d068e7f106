import type { EditConflictView } from '../shared/present.ts';
import { typedView, type ErrorView, type ModelsOf } from '../shared/views.ts';
import type {
  ConsoleAuditView,
  ConsoleOrdersView,
  ConsoleOrderView,
  ConsoleRefundDecidedView,
  ProductsView,
  RefundQueueView,
  RefundRowView,
  SplitCancelView,
  TransactionsView,
} from './present.ts';
import type {
  ChannelFormView,
  ChannelsView,
  ImportJobView,
  ImportPreviewView,
  ImportView,
  ProductFormView,
  ProductView,
  WarehouseFormView,
  WarehousesView,
} from './present-catalog.ts';
import type { AccountView, DashboardView, PasswordResetView, SignInView, StaffView, WebhooksView, WebhookView } from './present-admin.ts';
import type { MerchantsView, MerchantView, RefundListView } from './present-merchants.ts';
import type { BackupsView } from './present-backups.ts';
import type { BooksView } from './present-books.ts';
import type { ClaimQueueView, ClaimView } from './present-claims.ts';

const at = (name: string) => `console/views/${name}`;

/**
 * The console's views (issue 30, rule 3): name → template and model. `page(reply, status, name,
 * model)` takes only these names, each with its model's type; a typed model is built by a
 * presenter of console/present.ts (orders, refunds, audit, products) or of the resource's own
 * module: present-catalog.ts, present-merchants.ts, present-admin.ts (dashboard, webhooks, staff,
 * account, sign-in).
 */
export const CONSOLE_VIEWS = {
  error: typedView<ErrorView>('shared/views/error'),
  'edit-conflict': typedView<EditConflictView>('shared/views/edit-conflict'),
  order: typedView<ConsoleOrderView>(at('order')),
  orders: typedView<ConsoleOrdersView>(at('orders')),
  account: typedView<AccountView>(at('account')),
  audit: typedView<ConsoleAuditView>(at('audit')),
  backups: typedView<BackupsView>(at('backups')),
  books: typedView<BooksView>(at('books')),
  dashboard: typedView<DashboardView>(at('dashboard')),
  import: typedView<ImportView>(at('import')),
  'import-job': typedView<ImportJobView>(at('import-job')),
  'import-preview': typedView<ImportPreviewView>(at('import-preview')),
  claim: typedView<ClaimView>(at('claim')),
  claims: typedView<ClaimQueueView>(at('claims')),
  channels: typedView<ChannelsView>(at('channels')),
  'channel-form': typedView<ChannelFormView>(at('channel-form')),
  warehouses: typedView<WarehousesView>(at('warehouses')),
  'warehouse-form': typedView<WarehouseFormView>(at('warehouse-form')),
  'product-form': typedView<ProductFormView>(at('product-form')),
  merchant: typedView<MerchantView>(at('merchant')),
  merchants: typedView<MerchantsView>(at('merchants')),
  'password-reset': typedView<PasswordResetView>(at('password-reset')),
  product: typedView<ProductView>(at('product')),
  products: typedView<ProductsView>(at('products')),
  'refund-decided': typedView<ConsoleRefundDecidedView>(at('refund-decided')),
  refunds: typedView<RefundQueueView>(at('refunds')),
  'refund-row': typedView<RefundRowView>(at('refund-row')),
  'refund-list': typedView<RefundListView>(at('refund-list')),
  'sign-in': typedView<SignInView>(at('sign-in')),
  'split-cancel': typedView<SplitCancelView>(at('split-cancel')),
  staff: typedView<StaffView>(at('staff')),
  transactions: typedView<TransactionsView>(at('transactions')),
  webhook: typedView<WebhookView>(at('webhook')),
  webhooks: typedView<WebhooksView>(at('webhooks')),
};

export type ConsoleViews = ModelsOf<typeof CONSOLE_VIEWS>;
