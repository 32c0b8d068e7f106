import type { ColumnType, Generated } from 'kysely';
import type {
  FulfillmentStatus,
  LedgerKind,
  MerchantStatus,
  OrderStatus,
  RefundState,
  RefundStatus,
  SplitOrderStatus,
  StockistEnv,
  TokenKind,
  StoredWebhookEventType,
  WebhookDeliveryStatus,
  WebhookEndpointStatus,
} from '../domain/vocabulary.ts';
import type { RefundReason } from '../domain/refunds.ts';
import type { ClaimReason, ClaimResolution, ClaimStatus } from '../domain/claims.ts';
import type { StaffRole, StaffStatus } from '../domain/staff.ts';
import type { ActorKind, AuditAction } from '../domain/audit.ts';
import type { MerchantRole } from '../domain/merchant-users.ts';
import type { AccountKind, BillingMode, EntryType } from '../domain/ledger.ts';
import type { BackupLocation, BackupRunStatus, BackupTrigger } from '../domain/backup.ts';

/** Times are epoch milliseconds (UTC) in BIGINT columns; money is integer cents. */
export interface WarehousesTable {
  id: Generated<number>;
  code: string;
  name: string;
  country_code: string;
  country_name: string;
  status: number;
  /** Bumped by every save of the row (0043): an edit form's or an If-Match's version to compare. */
  version: ColumnType<number, number | undefined, number>;
  created_at: number;
  updated_at: number;
}

export interface CategoriesTable {
  id: number;
  name: string;
  parent_id: number;
  img_url: string | null;
  created_at: number;
  updated_at: number;
}

export interface ProductsTable {
  id: Generated<number>;
  sku: string;
  name: string;
  category_id: number | null;
  price_cents: number;
  weight_grams: number;
  image_url: string | null;
  options: string | null;
  /** Bumped by every save of the row (0043): an edit form's or an If-Match's version to compare. */
  version: ColumnType<number, number | undefined, number>;
  created_at: number;
  updated_at: number;
}

export interface StocksTable {
  product_id: number;
  warehouse_id: number;
  qty: number;
  updated_at: number;
}

export interface StockLedgerTable {
  id: Generated<number>;
  product_id: number;
  warehouse_id: number;
  delta: number;
  qty_after: number;
  kind: LedgerKind;
  order_id: number | null;
  refund_id: number | null;
  created_at: number;
  /** PostgreSQL: the committing transaction's feed number (see migration 0002); NULL on SQLite. */
  commit_seq: number | null;
  /** The greatest `created_at` of the ledger up to this row in commit order; set at commit (migration 0012). */
  time_mark: number | null;
  /** Why a person adjusted the stock by hand (the console's adjust form); null otherwise (migration 0034). */
  reason: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface StockFeedHeadTable {
  id: number;
  seq: number;
  /** The newest row's `time_mark`. */
  time_mark: Generated<number>;
  /** The largest `time_mark - created_at` of any ledger row: how far a row's time fell behind commit order. */
  time_lag: Generated<number>;
}

export interface ChannelsTable {
  id: Generated<number>;
  code: string;
  name: string;
  channel_type: string;
  /** JSON array of ISO country codes, or ["*"] for every destination. */
  countries: string;
  base_fee_cents: number;
  per_kg_fee_cents: number;
  delivery_days_min: number;
  delivery_days_max: number;
  /** JSON array of carrier names the ship form offers ('[]': none listed). */
  carriers: Generated<string>;
  /** https URL with `{trackingNo}`, making tracking numbers links; null: none. */
  tracking_url_template: string | null;
  /** Bumped by every save of the row (0043): an edit form's or an If-Match's version to compare. */
  version: ColumnType<number, number | undefined, number>;
  created_at: number;
  updated_at: number;
}

export interface ChannelWarehousesTable {
  channel_id: number;
  warehouse_id: number;
}

export interface MerchantsTable {
  id: Generated<number>;
  name: string;
  status: MerchantStatus;
  client_id: string;
  /** No longer read for sign-in (oauth_clients holds every client since 0022); kept as the merchant's stable key. */
  client_secret_hash: string;
  created_at: number;
  updated_at: number;
  /** 1: every user of the merchant's business manager must sign in with a TOTP code. */
  require_two_factor: ColumnType<number, number | undefined, number>;
}

export interface ApiTokensTable {
  id: Generated<number>;
  merchant_id: number;
  token_hash: string;
  environment: StockistEnv;
  /** Space-separated scopes, as in OAuth. */
  scopes: string;
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
  /** `operator`: issued by the operator API/CLI; `oauth`: issued by the token endpoint. */
  kind: ColumnType<TokenKind, TokenKind | undefined, TokenKind>;
  /** OAuth tokens: the refresh-token family they were issued with (revoked together on reuse). */
  family_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Issued by the token endpoint to this OAuth client (revoking the client revokes the token). */
  oauth_client_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** Personal access tokens: the name their creator gave. */
  name: ColumnType<string | null, string | null | undefined, string | null>;
  /** Coarse: written at most once per token per LAST_USED_EVERY_MS, off the request's path. */
  last_used_at: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface OAuthRefreshTokensTable {
  id: Generated<number>;
  merchant_id: number;
  family_id: string;
  token_hash: string;
  environment: StockistEnv;
  scopes: string;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
  created_at: number;
  oauth_client_id: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface OrdersTable {
  id: Generated<number>;
  merchant_id: number;
  custom_order_id: string | null;
  /** SHA-256 of the normalised request, to tell a replay from a conflicting reuse of customOrderId. */
  request_hash: string;
  sale_platform: string | null;
  channel_type: string;
  channel_code: string | null;
  remark: string | null;
  ship_to_country: string;
  /** The shipping address as JSON (the seed's address fields). */
  address: string;
  status: OrderStatus;
  financial_status: 'paid';
  fulfillment_status: FulfillmentStatus;
  refund_status: RefundStatus | null;
  currency_code: string;
  subtotal_cents: number;
  freight_cents: number;
  coupon_cents: number;
  promotion_cents: number;
  refunded_cents: number;
  pay_date: number | null;
  completed_date: number | null;
  cancel_date: number | null;
  refund_date: number | null;
  created_at: number;
  updated_at: number;
}

export interface SplitOrdersTable {
  id: Generated<number>;
  order_id: number;
  merchant_id: number;
  warehouse_id: number;
  warehouse_code: string;
  country_code: string;
  channel_code: string;
  channel_type: string;
  status: SplitOrderStatus;
  freight_cents: number;
  weight_grams: number;
  carrier: string | null;
  tracking_code: string | null;
  shipped_at: number | null;
  delivered_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface OrderItemsTable {
  id: Generated<number>;
  order_id: number;
  split_order_id: number;
  merchant_id: number;
  line_index: number;
  product_id: number;
  sku: string;
  product_name: string;
  image_url: string | null;
  unit_cents: number;
  quantity: number;
  refunded_quantity: number;
  pending_refund_quantity: number;
  created_at: number;
  updated_at: number;
}

export interface IdempotencyKeysTable {
  merchant_id: number;
  idempotency_key: string;
  request_hash: string;
  state: 'in_flight' | 'done';
  response_status: number | null;
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

export interface RefundsTable {
  id: Generated<number>;
  merchant_id: number;
  order_id: number;
  status: RefundState;
  reason: RefundReason;
  remark: string | null;
  failure_reason: string | null;
  /** The amount the refund is worth: estimated at request time, exact once decided. */
  amount_cents: number;
  whole_order: number;
  decided_by: 'auto' | 'operator' | null;
  /** Worker claim: which worker holds it and until when (a crashed worker's claim lapses). */
  claimed_by: string | null;
  claimed_until: number | null;
  decided_at: number | null;
  created_at: number;
  updated_at: number;
  /** Worker claims so far (each claim is one attempt, whether it failed, crashed or succeeded). */
  attempts: Generated<number>;
  /** The last failed attempt's error, for the operator. */
  last_error: string | null;
  /** 1: the worker gave up after REFUND_MAX_ATTEMPTS; it waits for the operator (still pending_review). */
  manual_review: Generated<number>;
}

/** One row (id 1) that `/readyz` updates to prove the database still takes writes. */
export interface StorageProbeTable {
  id: number;
  probed_at: number;
}

export interface RefundItemsTable {
  id: Generated<number>;
  refund_id: number;
  order_item_id: number;
  split_order_id: number;
  sku: string;
  country_code: string;
  quantity: number;
}

export interface WebhookEndpointsTable {
  id: Generated<number>;
  merchant_id: number;
  url: string;
  /** JSON array of WebhookEventType. */
  events: string;
  /** `whsec_<base64>`; stored because every delivery is signed with it. */
  secret: string;
  /** After a rotation the old secret also signs until `previous_secret_until`. */
  previous_secret: string | null;
  previous_secret_until: number | null;
  status: WebhookEndpointStatus;
  disabled_reason: string | null;
  disabled_at: number | null;
  /** First failed attempt since the last success; 24 h of failures disable the endpoint. */
  failing_since: number | null;
  /** stock.changed: JSON array of the SKUs wanted; NULL = every SKU. */
  skus: string | null;
  /** Bumped whenever `skus` or the feed position is replaced, so a fan-out that read the old ones does not commit. */
  stock_filter_rev: ColumnType<number, number | undefined, number>;
  /** stock.changed: the feed position (commit order key, ledger id) up to which deliveries exist; NULL = not subscribed. */
  stock_after_seq: number | null;
  stock_after_id: number | null;
  /** stock.changed: the next fan-out happens at or after this (the coalescing interval). */
  stock_due_at: number | null;
  /** Bumped by every change of the endpoint's settings (URL, events, SKUs, status; 0043), not by delivery bookkeeping. */
  version: ColumnType<number, number | undefined, number>;
  created_at: number;
  updated_at: number;
}

export interface WebhookEventsTable {
  id: Generated<number>;
  merchant_id: number;
  type: StoredWebhookEventType;
  /** The order the event is about; 0 for stock.changed. */
  order_id: number;
  /** The exact JSON body sent for this event ('' when it is a shared stock batch's). */
  payload: string;
  /** stock.changed: the shared body (stock_batches.payload). */
  stock_batch_id: number | null;
  created_at: number;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  merchant_id: number;
  endpoint_id: number;
  event_id: number;
  /** The lane: one order's events go out in order; 0 is the endpoint's stock.changed lane. */
  order_id: number;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: number | null;
  /** Automatic retries stop here (24 h after the event, or after a manual retry). */
  give_up_at: number;
  last_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  /** The first 2 KB of the last attempt's response body (public receivers only; migration 0040). */
  last_response_body: string | null;
  /** How long the last attempt took, in milliseconds (migration 0040). */
  last_duration_ms: number | null;
  delivered_at: number | null;
  claimed_by: string | null;
  claimed_until: number | null;
  /** stock.changed: the change-feed cursors the delivery covers, (from, to]. */
  cursor_from: string | null;
  cursor_to: string | null;
  created_at: number;
  updated_at: number;
}

/** A stock.changed body shared by every endpoint that gets it (not merchant-owned: stock is public to merchants). */
export interface StockBatchesTable {
  id: Generated<number>;
  payload: string;
  created_at: number;
}

/** The operator's internal note on an order (migration 0040): never shown to its merchant. */
export interface OrderNotesTable {
  order_id: number;
  note: string;
  /** The staff member who saved it last. */
  author_staff_id: number;
  created_at: number;
  updated_at: number;
}

/** SPEC §18: a claim after shipment (migration 0045); its id is the `claimNo`. */
export interface ClaimsTable {
  id: Generated<number>;
  merchant_id: number;
  order_id: number;
  split_order_id: number;
  status: ClaimStatus;
  reason: ClaimReason;
  resolution: ClaimResolution;
  description: string | null;
  /** 1: the operator asked for the goods back before the claim resolves. */
  return_required: ColumnType<number, number | undefined, number>;
  return_carrier: string | null;
  return_tracking_code: string | null;
  returned_at: number | null;
  received_warehouse_id: number | null;
  received_at: number | null;
  /** The reject's reason, the approval's note, or why a reshipment could not be made. */
  decision_reason: string | null;
  /** The credit, once credited. */
  amount_cents: number | null;
  replacement_order_id: number | null;
  decided_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A quantity of one order item a claim takes, at the item's unit price. */
export interface ClaimLinesTable {
  id: Generated<number>;
  claim_id: number;
  merchant_id: number;
  order_item_id: number;
  sku: string;
  quantity: number;
  unit_cents: number;
}

/** Evidence metadata (the bytes are in the file store); `claim_id` null until a claim references it. */
export interface ClaimFilesTable {
  id: Generated<number>;
  merchant_id: number;
  claim_id: number | null;
  content_type: string;
  size_bytes: number;
  sha256: string;
  storage_key: string;
  created_at: number;
}

/** The one credit or reshipment of a claim (its key is the claim). */
export interface ClaimResolutionsTable {
  claim_id: number;
  merchant_id: number;
  kind: 'credit' | 'reship';
  journal_entry_id: number | null;
  replacement_order_id: number | null;
  created_at: number;
}

export interface Database {
  claims: ClaimsTable;
  claim_lines: ClaimLinesTable;
  claim_files: ClaimFilesTable;
  claim_resolutions: ClaimResolutionsTable;
  warehouses: WarehousesTable;
  categories: CategoriesTable;
  products: ProductsTable;
  stocks: StocksTable;
  stock_ledger: StockLedgerTable;
  stock_feed_head: StockFeedHeadTable;
  channels: ChannelsTable;
  channel_warehouses: ChannelWarehousesTable;
  merchants: MerchantsTable;
  api_tokens: ApiTokensTable;
  orders: OrdersTable;
  split_orders: SplitOrdersTable;
  order_items: OrderItemsTable;
  idempotency_keys: IdempotencyKeysTable;
  refunds: RefundsTable;
  refund_items: RefundItemsTable;
  storage_probe: StorageProbeTable;
  oauth_refresh_tokens: OAuthRefreshTokensTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  order_notes: OrderNotesTable;
  stock_batches: StockBatchesTable;
  staff_users: StaffUsersTable;
  console_sessions: ConsoleSessionsTable;
  staff_password_resets: StaffPasswordResetsTable;
  audit_log: AuditLogTable;
  merchant_users: MerchantUsersTable;
  merchant_invitations: MerchantInvitationsTable;
  merchant_password_resets: MerchantPasswordResetsTable;
  web_form_keys: WebFormKeysTable;
  web_flashes: WebFlashesTable;
  web_kept_forms: WebKeptFormsTable;
  merchant_recovery_codes: MerchantRecoveryCodesTable;
  manager_sessions: ManagerSessionsTable;
  oauth_clients: OAuthClientsTable;
  merchant_usage_daily: MerchantUsageDailyTable;
  merchant_recent_errors: MerchantRecentErrorsTable;
  ledger_accounts: LedgerAccountsTable;
  journal_entries: JournalEntriesTable;
  journal_lines: JournalLinesTable;
  ledger_meta: LedgerMetaTable;
  backup_lease: BackupLeaseTable;
  backup_runs: BackupRunsTable;
}

/** The one process whose backup runs now (0042): its holder id, until `expires_at` unless renewed. */
export interface BackupLeaseTable {
  name: string;
  holder: string;
  expires_at: number;
}

/** One scheduled or requested backup (0042); the counts are the archive manifest's. */
export interface BackupRunsTable {
  id: Generated<number>;
  status: BackupRunStatus;
  trigger: BackupTrigger;
  /** The staff member's email for "Back up now"; null for the schedule. */
  requested_by: string | null;
  /** The lease holder id of the run, so a run whose process died can be told from one that runs. */
  holder: string;
  started_at: number;
  finished_at: number | null;
  /** The archive's name (no directory); null when the run failed before writing one. */
  file: string | null;
  location: BackupLocation | null;
  bytes: number | null;
  duration_ms: number | null;
  merchants: number | null;
  orders: number | null;
  refunds: number | null;
  journal_entries: number | null;
  stock_rows: number | null;
  /** 1: the trial restore passed; 0: it failed; null: not reached. */
  verified: number | null;
  error: string | null;
  /** When pruning removed the archive. */
  pruned_at: number | null;
}

export interface StaffUsersTable {
  id: Generated<number>;
  email: string;
  /** Lower case: unique, so two accounts never differ only by case. */
  email_key: string;
  role: StaffRole;
  /** argon2id, PHC string format (parameters inside). */
  password_hash: string;
  status: StaffStatus;
  last_sign_in_at: number | null;
  password_changed_at: number;
  created_at: number;
  updated_at: number;
}

export interface ConsoleSessionsTable {
  id_hash: string;
  staff_id: number;
  csrf_secret: string;
  address: string | null;
  created_at: number;
  last_seen_at: number;
  idle_expires_at: number;
  expires_at: number;
}

/** A one-time link that sets a console staff account's password (0032). */
export interface StaffPasswordResetsTable {
  id: Generated<number>;
  staff_id: number;
  token_hash: string;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
  created_by: string;
  created_at: number;
}

export interface AuditLogTable {
  id: Generated<number>;
  actor_kind: ActorKind;
  actor_id: string;
  action: AuditAction;
  target: string;
  /** JSON objects (AuditSummary), or NULL. */
  before_summary: string | null;
  after_summary: string | null;
  request_id: string | null;
  created_at: number;
  /** The merchant the change concerns (null: none, e.g. the operator's own staff), so a merchant admin sees its rows. */
  merchant_id: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface MerchantUsersTable {
  id: Generated<number>;
  merchant_id: number;
  email: string;
  email_key: string;
  role: MerchantRole;
  password_hash: string;
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_last_step: number | null;
  last_sign_in_at: number | null;
  password_changed_at: number;
  created_at: number;
  updated_at: number;
}

export interface MerchantInvitationsTable {
  id: Generated<number>;
  merchant_id: number;
  email: string;
  email_key: string;
  role: MerchantRole;
  token_hash: string;
  expires_at: number;
  accepted_at: number | null;
  /** Revoked by an admin or the operator, or by a later invitation, acceptance or removal (0029). */
  revoked_at: number | null;
  created_by: string;
  created_at: number;
}

/** A one-time link that sets a business manager account's password (0031). */
export interface MerchantPasswordResetsTable {
  id: Generated<number>;
  merchant_id: number;
  user_id: number;
  token_hash: string;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
  created_by: string;
  created_at: number;
}

/** A consumed one-time form key of a web front end (0033). */
export interface WebFormKeysTable {
  form_key: string;
  session_hash: string;
  request_id: string;
  result_path: string | null;
  created_at: number;
}

/** What the next page of a web session shows once (0033); `payload` is sealed with the session's cookie. */
export interface WebFlashesTable {
  session_hash: string;
  slot: string;
  payload: string;
  created_at: number;
}

/** A form sent after its session ended (0048), kept for the browser holding `handle_hash`'s handle; `sealed` under that handle. */
export interface WebKeptFormsTable {
  handle_hash: string;
  page: string;
  action: string;
  sealed: string;
  created_at: number;
}

/** A business manager user's one-time recovery code (0037): only its SHA-256 is stored. */
export interface MerchantRecoveryCodesTable {
  id: Generated<number>;
  merchant_id: number;
  user_id: number;
  code_hash: string;
  used_at: number | null;
  created_at: number;
}

export interface ManagerSessionsTable {
  id_hash: string;
  user_id: number;
  csrf_secret: string;
  stage: 'password' | 'complete';
  address: string | null;
  created_at: number;
  last_seen_at: number;
  idle_expires_at: number;
  expires_at: number;
}

export interface OAuthClientsTable {
  id: Generated<number>;
  merchant_id: number;
  client_id: string;
  client_secret_hash: string;
  /** The secret a rotation replaced, still accepted until `previous_secret_expires_at` (migration 0039). */
  previous_secret_hash: ColumnType<string | null, string | null | undefined, string | null>;
  previous_secret_expires_at: ColumnType<number | null, number | null | undefined, number | null>;
  name: string;
  created_at: number;
  rotated_at: number | null;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** Requests per merchant, environment, UTC day, status class and error code (migration 0023). */
export interface MerchantUsageDailyTable {
  merchant_id: number;
  environment: StockistEnv;
  /** Days since 1970-01-01, UTC. */
  day: number;
  /** 2, 3, 4 or 5. */
  status_class: number;
  /** 0 for success, else the envelope's five-digit code. */
  error_code: number;
  request_count: number;
}

/** A merchant's newest 4xx answers (at most RECENT_ERRORS_PER_MERCHANT per merchant and environment). */
export interface MerchantRecentErrorsTable {
  id: Generated<number>;
  merchant_id: number;
  environment: StockistEnv;
  request_id: string;
  at: number;
  method: string;
  /** The route's pattern, never the URL sent (a query string may hold anything). */
  route: string;
  status: number;
  error_code: number;
}

/** SPEC §15: an account of the money ledger (migration 0027). `merchant_id` 0: the supplier's own. */
export interface LedgerAccountsTable {
  id: Generated<number>;
  /** `merchant:<id>:<environment>` or `supplier:<kind>:<environment>`: each account exists once. */
  account_key: string;
  merchant_id: number;
  environment: StockistEnv;
  kind: AccountKind;
  currency: string;
  /** Kept with the lines for merchant accounts; 0 for the supplier's (read from their lines). */
  balance_cents: number;
  billing_mode: BillingMode;
  credit_limit_cents: number;
  low_balance_threshold_cents: number | null;
  /** Bumped by every change of the terms above (0043), not by postings: the terms form's version. */
  terms_version: ColumnType<number, number | undefined, number>;
  /** The `seq` of the account's newest entry: bumped by the statement that moves the balance, under the row's lock (migration 0044). */
  last_seq: Generated<number>;
  /** The `created_at` of the account's newest entry: entries' times never go backwards in `seq` order. */
  last_posted_at: Generated<number>;
  created_at: number;
  updated_at: number;
}

/**
 * One money movement: immutable, unique per cause. It moves `amount_cents` into the merchant
 * account and the same amount out of `counter_account_id` (migration 0044): its two lines sum to
 * zero by construction.
 */
export interface JournalEntriesTable {
  id: Generated<number>;
  cause: string;
  merchant_id: number;
  environment: StockistEnv;
  /** The merchant account it moves. */
  account_id: number;
  /** Its place in the account's sequence: 1, 2, 3, … in the order postings changed the balance; unique per account. */
  seq: number;
  /** The supplier account on the other side (sales, refunds, cash, adjustments), moved by −amount_cents. */
  counter_account_id: number;
  type: EntryType;
  /** The merchant account's side: negative for a charge, positive for a credit. */
  amount_cents: number;
  balance_after_cents: number;
  currency: string;
  order_id: number | null;
  refund_id: number | null;
  split_order_id: number | null;
  reference: string | null;
  description: string;
  created_at: number;
}

/** A view (migration 0044): each entry's two lines, read from its row — the merchant's side and the counter account's. */
export interface JournalLinesTable {
  entry_id: number;
  account_id: number;
  /** The change to the account's balance. */
  amount_cents: number;
}

export interface LedgerMetaTable {
  name: string;
  value: number;
}
