import { CHANNEL_TYPES } from '../../domain/channels.ts';
import { CSV_COLUMNS, IMPORT_SECTIONS, type ImportProblem, type FieldChange, type SectionPreview } from '../../domain/import-format.ts';
import { staffImportRights, type StaffRole } from '../../domain/staff.ts';
import type { ChannelForm, ProductForm, WarehouseForm } from '../../schemas/console.ts';
import type { ImportPreview, ImportProgress, ImportResult } from '../../services/import.service.ts';
import type { StockResult } from '../../services/stock.service.ts';
import type { Category } from '../../store/categories.repository.ts';
import type { Channel } from '../../store/channels.repository.ts';
import type { Product } from '../../store/products.repository.ts';
import type { Warehouse } from '../../store/warehouses.repository.ts';
import type { Instant } from '../times.ts';
import { moneyFromCents, moment, presentEditConflict, type Choice, type EditConflictView, type Link } from '../shared/present.ts';
import type { Html, PageModel } from '../shared/views.ts';

/**
 * The console's catalogue pages (issue 30, rule 3): a product's stock page and its form, the
 * warehouses and channels with their forms, and the import upload, its job and its dry run. Each
 * presenter builds the typed model of one view (console/views.ts); money (`…Cents` → `12.50`),
 * times and counted nouns become text here, never in a template. Unit tests:
 * test/unit/web-presenters-catalog.test.ts.
 */

const PREFIX = '/console';
const IMPORT = `${PREFIX}/import`;
const enc = encodeURIComponent;

/** `1 row`, `3 rows`. */
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
/** A stock change as typed: `+20`, `-5`, `0`. */
const signed = (n: number) => `${n > 0 ? '+' : ''}${n}`;

// ---- Forms: what a refused form carries back.

/** A refused form as the page module has it: a sentence, and the reason per field (the form's field names). */
export interface FormRefusal {
  message: string;
  fields: Record<string, string>;
}

/** What every catalogue form shows: create or edit, where it posts, and why it was refused. */
interface FormModel extends PageModel {
  /** A create form (the code is typed); else the edit form of an existing row (the code is shown). */
  create: boolean;
  action: string;
  /** `Not saved: <message>.`'s message, or null. */
  refused: string | null;
  /** The fields the refusal names (`aria-invalid`). */
  invalid: readonly string[];
  /** The submit button's text. */
  submit: string;
  /** The version the edit form was read at, sent back as the hidden `version`; null on a create form. */
  version: string | null;
}

const refusalParts = (refusal: FormRefusal | null) => ({ refused: refusal?.message ?? null, invalid: refusal ? Object.keys(refusal.fields) : [] });

/** A form field's text as typed; a field the form did not send is blank. */
const text = (value: string | undefined) => value ?? '';

// ---- Products.

/** The product form's fields as an operator would type them again (price in major units, options as indented JSON). */
export const productFormOf = (p: Product): ProductForm => ({
  version: String(p.version),
  sku: p.sku,
  name: p.name,
  categoryId: p.category_id === null ? '' : String(p.category_id),
  price: moneyFromCents(p.price_cents),
  weightGrams: String(p.weight_grams),
  imageUrl: p.image_url ?? '',
  optionsJson: p.options === null ? '' : JSON.stringify(JSON.parse(p.options), null, 2),
});

/** views['product-form']: a new product or the edit form of one, with what was typed and why it was refused. */
export interface ProductFormView extends FormModel {
  /** `← Catalogue & stock` (a new product) or `← <sku>` (its page). */
  back: Link;
  /** A create refused because the SKU exists: its edit form. */
  editExisting: Link | null;
  values: { sku: string; name: string; price: string; weightGrams: string; imageUrl: string; optionsJson: string };
  /** The supplier's currency, which the price is in (`Price (EUR)`). */
  currency: string;
  /** `None` first (in the template), then each category, `<id> · <name>`. */
  categories: (Choice & { text: string })[];
}

export function presentProductForm(
  mode: 'create' | 'update',
  form: ProductForm,
  categories: readonly Pick<Category, 'id' | 'name'>[],
  currency: string,
  refusal: FormRefusal | null = null,
): ProductFormView {
  const create = mode === 'create';
  const sku = text(form.sku);
  const product = `${PREFIX}/products/${enc(sku)}`;
  return {
    title: create ? 'New product' : `Edit ${sku}`,
    create,
    action: create ? `${PREFIX}/new-product` : `${product}/edit`,
    ...refusalParts(refusal),
    submit: create ? 'Create product' : 'Save product',
    version: create ? null : text(form.version),
    back: create ? { href: `${PREFIX}/products`, text: 'Catalogue & stock' } : { href: product, text: sku },
    editExisting:
      create && refusal && refusal.fields.sku === undefined && /exists already/.test(refusal.message) ? { href: `${product}/edit`, text: `Edit ${sku}` } : null,
    values: {
      sku,
      name: text(form.name),
      price: text(form.price),
      weightGrams: text(form.weightGrams),
      imageUrl: text(form.imageUrl),
      optionsJson: text(form.optionsJson),
    },
    currency,
    categories: categories.map((c) => ({ value: String(c.id), text: `${c.id} · ${c.name}`, selected: String(c.id) === form.categoryId })),
  };
}

/** One SKU as productStock (services/stock-history.service.ts) gives it. */
export interface ProductStockInput {
  product: { sku: string; name: string; priceCents: number; weightGrams: number; categoryId: number | null; imageUrl: string | null; options: string | null };
  warehouses: readonly { warehouseCode: string; warehouseName: string; status: number; qty: number }[];
  history: readonly {
    id: number;
    warehouseCode: string;
    delta: number;
    qtyAfter: number;
    kind: string;
    orderId: number | string | null;
    refundId: number | string | null;
    reason: string | null;
    createdAt: Instant;
  }[];
  nextBefore: number | null;
}

/** views.product: one SKU's facts, its stock per warehouse, the adjustment form and its ledger history, newest first. */
export interface ProductView extends PageModel {
  sku: string;
  /** `<sku> · <name>`. */
  heading: string;
  /** `12.50 EUR`: the supplier's currency. */
  price: string;
  /** `350 g`. */
  weight: string;
  /** The product's edit form (a role that edits the catalogue). */
  edit: string | null;
  category: string;
  image: Link | null;
  /** The options as the catalogue keeps them (JSON text), or null. */
  options: string | null;
  /** `Adjusted B in G006 by -2: now 5.`: the answer to the adjustment just made, shown once. */
  adjusted: string | null;
  /** Why the adjustment just sent was refused. */
  error: string | null;
  warehouses: { code: string /** `Yiwu`, `Closed (disabled)`. */; name: string; qty: string }[];
  /** The adjustment form (a role that adjusts stock), with what was typed. */
  adjust: { action: string; warehouses: (Choice & { text: string })[]; delta: string; reason: string } | null;
  history: { id: string; when: Html; warehouse: string; delta: string; qtyAfter: string /** `sale · order 12`. */; why: string; reason: string | null }[];
  /** The next page of the history (older changes). */
  older: string | null;
}

export function presentProduct(
  stock: ProductStockInput,
  {
    currency,
    canAdjust,
    canEdit,
    adjusted = null,
    error = null,
    form = { warehouseCode: '', delta: '', reason: '' },
  }: {
    currency: string;
    canAdjust: boolean;
    canEdit: boolean;
    adjusted?: StockResult | null;
    error?: string | null;
    form?: { warehouseCode: string; delta: string; reason: string };
  },
): ProductView {
  const p = stock.product;
  const page = `${PREFIX}/products/${enc(p.sku)}`;
  return {
    title: `Stock of ${p.sku}`,
    sku: p.sku,
    heading: `${p.sku} · ${p.name}`,
    price: moneyFromCents(p.priceCents, currency),
    weight: `${p.weightGrams} g`,
    edit: canEdit ? `${page}/edit` : null,
    category: p.categoryId === null ? '—' : String(p.categoryId),
    image: p.imageUrl ? { href: p.imageUrl, text: p.imageUrl } : null,
    options: p.options || null,
    adjusted: adjusted ? `Adjusted ${adjusted.sku} in ${adjusted.warehouseCode} by ${signed(adjusted.delta)}: now ${adjusted.qty}.` : null,
    error,
    warehouses: stock.warehouses.map((w) => ({
      code: w.warehouseCode,
      name: w.status === 1 ? w.warehouseName : `${w.warehouseName} (disabled)`,
      qty: String(w.qty),
    })),
    adjust: canAdjust
      ? {
          action: `${page}/adjust`,
          warehouses: stock.warehouses.map((w) => ({
            value: w.warehouseCode,
            text: `${w.warehouseCode} (${w.qty})`,
            selected: w.warehouseCode === form.warehouseCode,
          })),
          delta: form.delta,
          reason: form.reason,
        }
      : null,
    history: stock.history.map((h) => ({
      id: String(h.id),
      when: moment(h.createdAt),
      warehouse: h.warehouseCode,
      delta: signed(h.delta),
      qtyAfter: String(h.qtyAfter),
      why: `${h.kind}${h.orderId ? ` · order ${h.orderId}` : ''}${h.refundId ? ` · refund ${h.refundId}` : ''}`,
      reason: h.reason || null,
    })),
    older: stock.nextBefore === null ? null : `${page}?before=${stock.nextBefore}`,
  };
}

// ---- Warehouses.

export const warehouseFormOf = (w: Warehouse): WarehouseForm => ({
  version: String(w.version),
  warehouseCode: w.code,
  name: w.name,
  countryCode: w.country_code,
  countryName: w.country_name,
  status: String(w.status),
});

/** views.warehouses: every warehouse, oldest first, each with its edit link. */
export interface WarehousesView extends PageModel {
  rows: { code: string; name: string /** `DE · Germany`. */; country: string; status: 'enabled' | 'disabled'; statusText: string; edit: string }[];
}

export function presentWarehouses(warehouses: readonly Pick<Warehouse, 'code' | 'name' | 'country_code' | 'country_name' | 'status'>[]): WarehousesView {
  return {
    title: 'Warehouses',
    rows: warehouses.map((w) => ({
      code: w.code,
      name: w.name,
      country: `${w.country_code} · ${w.country_name}`,
      status: w.status === 1 ? 'enabled' : 'disabled',
      statusText: w.status === 1 ? 'Enabled' : 'Disabled',
      edit: `${PREFIX}/warehouses/${enc(w.code)}/edit`,
    })),
  };
}

/** views['warehouse-form']: a new warehouse or the edit form of one. */
export interface WarehouseFormView extends FormModel {
  values: { warehouseCode: string; name: string; countryCode: string; countryName: string };
  /** Enabled (any status but `0`) or disabled. */
  enabled: boolean;
}

export function presentWarehouseForm(mode: 'create' | 'update', form: WarehouseForm, refusal: FormRefusal | null = null): WarehouseFormView {
  const create = mode === 'create';
  const code = text(form.warehouseCode);
  return {
    title: create ? 'New warehouse' : `Edit warehouse ${code}`,
    create,
    action: create ? `${PREFIX}/warehouses/new` : `${PREFIX}/warehouses/${enc(code)}/edit`,
    ...refusalParts(refusal),
    submit: create ? 'Create warehouse' : 'Save warehouse',
    version: create ? null : text(form.version),
    values: { warehouseCode: code, name: text(form.name), countryCode: text(form.countryCode), countryName: text(form.countryName) },
    enabled: form.status !== '0',
  };
}

// ---- Logistics channels.

/** The channel form's fields as an operator would type them again (fees in major units, carriers a line each). */
export const channelFormOf = (c: Channel): ChannelForm => ({
  version: String(c.version),
  channelCode: c.code,
  name: c.name,
  channelType: c.channel_type,
  warehouseCodes: c.warehouseCodes,
  countries: (JSON.parse(c.countries) as string[]).join(', '),
  baseFee: moneyFromCents(c.base_fee_cents),
  perKgFee: moneyFromCents(c.per_kg_fee_cents),
  deliveryDaysMin: String(c.delivery_days_min),
  deliveryDaysMax: String(c.delivery_days_max),
  carrierList: (JSON.parse(c.carriers) as string[]).join('\n'),
  trackingUrlTemplate: c.tracking_url_template ?? '',
});

/** The warehouses a channel form ticked: absent, one code, or several. */
export const pickedWarehouses = (form: Pick<ChannelForm, 'warehouseCodes'>): string[] =>
  form.warehouseCodes === undefined ? [] : Array.isArray(form.warehouseCodes) ? form.warehouseCodes : [form.warehouseCodes];

/** views.channels: every logistics channel, oldest first, each with its edit link. */
export interface ChannelsView extends PageModel {
  rows: {
    code: string;
    name: string;
    type: string;
    warehouses: string;
    countries: string;
    /** `UPS, DHL`, or `—`. */
    carriers: string;
    /** The tracking URL template, or `—`. */
    tracking: string;
    edit: string;
  }[];
}

export function presentChannels(
  channels: readonly Pick<Channel, 'code' | 'name' | 'channel_type' | 'warehouseCodes' | 'countries' | 'carriers' | 'tracking_url_template'>[],
): ChannelsView {
  return {
    title: 'Channels',
    rows: channels.map((c) => {
      const carriers = JSON.parse(c.carriers) as string[];
      return {
        code: c.code,
        name: c.name,
        type: c.channel_type,
        warehouses: c.warehouseCodes.join(', '),
        countries: (JSON.parse(c.countries) as string[]).join(', '),
        carriers: carriers.length ? carriers.join(', ') : '—',
        tracking: c.tracking_url_template ?? '—',
        edit: `${PREFIX}/channels/${enc(c.code)}/edit`,
      };
    }),
  };
}

/** views['channel-form']: a new channel or the edit form of one. */
export interface ChannelFormView extends FormModel {
  values: {
    channelCode: string;
    name: string;
    countries: string;
    baseFee: string;
    perKgFee: string;
    deliveryDaysMin: string;
    deliveryDaysMax: string;
    carrierList: string;
    trackingUrlTemplate: string;
  };
  /** The supplier's currency, which the fees are in (`Base fee (EUR)`). */
  currency: string;
  types: Choice[];
  /** A checkbox per warehouse, `<code> · <name>`, ticked as the form was. */
  warehouses: { code: string; text: string; checked: boolean }[];
}

export function presentChannelForm(
  mode: 'create' | 'update',
  form: ChannelForm,
  warehouses: readonly Pick<Warehouse, 'code' | 'name'>[],
  currency: string,
  refusal: FormRefusal | null = null,
): ChannelFormView {
  const create = mode === 'create';
  const code = text(form.channelCode);
  const picked = pickedWarehouses(form);
  return {
    title: create ? 'New channel' : `Edit channel ${code}`,
    create,
    action: create ? `${PREFIX}/channels/new` : `${PREFIX}/channels/${enc(code)}/edit`,
    ...refusalParts(refusal),
    submit: create ? 'Create channel' : 'Save channel',
    version: create ? null : text(form.version),
    values: {
      channelCode: code,
      name: text(form.name),
      countries: text(form.countries),
      baseFee: text(form.baseFee),
      perKgFee: text(form.perKgFee),
      deliveryDaysMin: text(form.deliveryDaysMin),
      deliveryDaysMax: text(form.deliveryDaysMax),
      carrierList: text(form.carrierList),
      trackingUrlTemplate: text(form.trackingUrlTemplate),
    },
    currency,
    types: CHANNEL_TYPES.map((t) => ({ value: t, selected: t === form.channelType })),
    warehouses: warehouses.map((w) => ({ code: w.code, text: `${w.code} · ${w.name}`, checked: picked.includes(w.code) })),
  };
}

// ---- Import: the upload form, a job's page, a dry run.

/** views.import: the upload form, the formats it takes, and why the last upload was refused (with its file name). */
export interface ImportView extends PageModel {
  /** The CSV headers: `sku,name,price,weightGrams[,…]`, `sku,warehouseCode,qty`. */
  formats: { products: string; stocks: string };
  fileName: string;
  error: string | null;
  /** What the signed-in role may not import, in a sentence; null when it may import every kind of row. */
  limit: string | null;
}

const listed = (words: readonly string[]) => (words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`);

/** The sentence saying which kinds of row a role's import may not write (issue 44, 10), or null. */
function importLimit(role: StaffRole): string | null {
  const refused = IMPORT_SECTIONS.filter((s) => staffImportRights(role).refused[s]);
  if (refused.length === 0) return null;
  const allowed = IMPORT_SECTIONS.filter((s) => !refused.includes(s));
  return `Your role (${role}) imports ${allowed.length ? `${listed(allowed)} only` : 'nothing'}: a file with rows of ${listed(refused)} is refused, and the dry run lists those rows.`;
}

export const presentImport = (role: StaffRole, { fileName = '', error = null }: { fileName?: string; error?: string | null } = {}): ImportView => ({
  title: 'Import',
  formats: {
    products: `${CSV_COLUMNS.products.required.join(',')}[,${CSV_COLUMNS.products.optional.join(',')}]`,
    stocks: CSV_COLUMNS.stocks.required.join(','),
  },
  fileName,
  error,
  limit: importLimit(role),
});

/** An import running or finished, as the import page module keeps it. */
export interface ImportJobInput {
  id: string;
  fileName: string;
  state: 'running' | 'done' | 'refused' | 'failed';
  progress: ImportProgress | null;
  result: ImportResult | null;
  problems: readonly ImportProblem[];
  omitted: number;
  message: string | null;
}

/** A bad row of an import: its line (`''` and `–` for none), the field (`–`) and what is wrong. */
export interface ProblemRow {
  line: string;
  lineText: string;
  field: string;
  message: string;
}

/** views['import-job']: an import's progress while it runs (htmx polls the page), then its result. */
export interface ImportJobView extends PageModel {
  fileName: string;
  state: ImportJobInput['state'];
  /** The job's page: polled while it runs, and the Refresh link. */
  href: string;
  /** `12 rows read.` once there is progress, and the progress bar's max and value (bytes). */
  running: { rowsRead: string | null; max: string; value: string } | null;
  /** `Imported 3 rows`, what they were (`3 stocks`, `nothing new`), the stock changes and their noun. */
  done: { imported: string; what: string; ledgerRows: string; ledgerNoun: string } | null;
  /** `Nothing was imported: 2 problems.`, the bad rows, and `… and 3 more.` beyond the ones listed. */
  refused: { summary: string; problems: ProblemRow[]; more: string | null } | null;
  /** Why the import failed (nothing written). */
  failed: string | null;
}

const IMPORTED_KINDS = ['warehouses', 'categories', 'products', 'stocks', 'channels'] as const;

export function presentImportJob(job: ImportJobInput): ImportJobView {
  const r = job.result;
  const p = job.progress;
  const total = job.problems.length + job.omitted;
  return {
    title: `Import of ${job.fileName}`,
    fileName: job.fileName,
    state: job.state,
    href: `${IMPORT}/${job.id}`,
    running:
      job.state === 'running' ? { rowsRead: p ? `${p.rows} rows read.` : null, max: String(p ? p.totalBytes : 1), value: String(p ? p.bytesRead : 0) } : null,
    done:
      job.state === 'done' && r
        ? {
            imported: `Imported ${count(r.rows, 'row')}`,
            what:
              IMPORTED_KINDS.filter((k) => r[k] > 0)
                .map((k) => `${r[k]} ${k}`)
                .join(', ') || 'nothing new',
            ledgerRows: String(r.ledgerRows),
            ledgerNoun: r.ledgerRows === 1 ? 'stock change' : 'stock changes',
          }
        : null,
    refused:
      job.state === 'refused'
        ? {
            summary: `Nothing was imported: ${count(total, 'problem')}.`,
            problems: job.problems.map((e) => ({
              line: e.line ? String(e.line) : '',
              lineText: e.line ? String(e.line) : '–',
              field: e.field || '–',
              message: e.message,
            })),
            more: job.omitted > 0 ? `… and ${job.omitted} more.` : null,
          }
        : null,
    failed: job.state === 'failed' ? (job.message ?? '') : null,
  };
}

const SECTION_LABELS = { warehouses: 'Warehouses', categories: 'Categories', products: 'Products', stocks: 'Stock levels', channels: 'Channels' } as const;

/** One field of a row a dry run would change: money fields (`…Cents`) in major units under their name without `Cents`. */
export interface ChangeView {
  field: string;
  label: string;
  /** Null for a new row (only the value it would have). */
  before: string | null;
  after: string;
}

const isMoney = (field: string) => field.endsWith('Cents');
const valueText = (field: string, v: FieldChange['after']) =>
  isMoney(field) && typeof v === 'number' ? moneyFromCents(v) : v === null || v === '' ? '—' : String(v);

const changeView = (kind: 'new' | 'changed', c: FieldChange): ChangeView => ({
  field: c.field,
  label: isMoney(c.field) ? c.field.slice(0, -'Cents'.length) : c.field,
  before: kind === 'changed' ? valueText(c.field, c.before) : null,
  after: valueText(c.field, c.after),
});

/** views['import-preview']: what an upload would change, section by section, its problems, and the Apply form when it has none. */
export interface ImportPreviewView extends PageModel {
  fileName: string;
  /** `3 rows read.` */
  rowsRead: string;
  /** Why applying was refused just now (another import running). */
  error: string | null;
  /** The sections with any row: `1 new · 2 changed · 0 unchanged`. */
  counts: { key: string; label: string; created: string; changed: string; unchanged: string }[];
  /** `Importing this file would write nothing: 2 problems.`, each bad row, and `… and 3 more.` */
  problems: {
    summary: string;
    list: { line: string /** `p.csv line 4`. */; where: string; field: string | null; message: string }[];
    more: string | null;
  } | null;
  /** The rows each section would create or change (at most MAX_PREVIEW_ROWS of them; `Showing the first 500 of 812.` beyond). */
  sections: {
    key: string;
    label: string;
    keyHeading: string;
    rows: { key: string; kind: 'new' | 'changed'; changes: ChangeView[] }[];
    showing: string | null;
  }[];
  /** The Apply form (no problems): what applying does, and where it posts. */
  apply: { text: string; action: string } | null;
}

export function presentImportPreview(preview: { id: string; fileName: string; result: ImportPreview }, error: string | null = null): ImportPreviewView {
  const r = preview.result;
  const total = r.problems.length + r.omitted;
  const sections = Object.entries(SECTION_LABELS).map(([key, label]) => ({ key, label, s: r.sections[key as keyof typeof SECTION_LABELS] as SectionPreview }));
  const changes = Object.values(r.sections).reduce((n, s) => n + s.created + s.changed, 0);
  return {
    title: `Dry run of ${preview.fileName}`,
    fileName: preview.fileName,
    rowsRead: `${count(r.rows, 'row')} read.`,
    error,
    counts: sections
      .filter(({ s }) => s.created + s.changed + s.unchanged > 0)
      .map(({ key, label, s }) => ({ key, label, created: String(s.created), changed: String(s.changed), unchanged: String(s.unchanged) })),
    problems:
      total > 0
        ? {
            summary: `Importing this file would write nothing: ${count(total, 'problem')}.`,
            list: r.problems.map((e) => ({
              line: e.line ? String(e.line) : '',
              where: `${e.file}${e.line ? ` line ${e.line}` : ''}`,
              field: e.field || null,
              message: e.message,
            })),
            more: r.omitted ? `… and ${r.omitted} more.` : null,
          }
        : null,
    sections: sections
      .filter(({ s }) => s.rows.length > 0)
      .map(({ key, label, s }) => ({
        key,
        label,
        keyHeading: key === 'stocks' ? 'SKU @ warehouse' : 'Row',
        rows: s.rows.map((row) => ({ key: row.key, kind: row.kind, changes: row.changes.map((c) => changeView(row.kind, c)) })),
        showing: s.created + s.changed > s.rows.length ? `Showing the first ${s.rows.length} of ${s.created + s.changed}.` : null,
      })),
    apply:
      total === 0
        ? {
            text:
              changes === 0
                ? 'The file changes nothing; applying it only records the import.'
                : `Applying imports the file as shown: ${count(changes, 'row')} created or changed, all or nothing.`,
            action: `${IMPORT}/preview/${preview.id}/apply`,
          }
        : null,
  };
}

// ---- Edit conflicts: a save whose version is no longer the stored one (docs/web.md, "Edit conflicts").

/** The product form sent against an older version, beside the product as stored now. */
export function presentProductConflict(
  sent: ProductForm,
  stored: Product,
  categories: readonly Pick<Category, 'id' | 'name'>[],
  currency: string,
): EditConflictView {
  const now = productFormOf(stored);
  const category = (id: string | undefined) => {
    const c = categories.find((x) => String(x.id) === id);
    return c ? `${c.id} · ${c.name}` : text(id);
  };
  const page = `${PREFIX}/products/${enc(stored.sku)}`;
  return presentEditConflict({
    what: `Product ${stored.sku}`,
    action: `${page}/edit`,
    discard: { href: `${page}/edit`, text: 'Discard mine and edit the stored version' },
    storedVersion: stored.version,
    fields: [
      { name: 'name', label: 'Name', yours: text(sent.name), stored: text(now.name) },
      {
        name: 'categoryId',
        label: 'Category',
        yours: text(sent.categoryId),
        stored: text(now.categoryId),
        shown: { yours: category(sent.categoryId), stored: category(now.categoryId) },
      },
      { name: 'price', label: `Price (${currency})`, yours: text(sent.price), stored: text(now.price), compare: 'number' },
      { name: 'weightGrams', label: 'Weight (grams)', yours: text(sent.weightGrams), stored: text(now.weightGrams), compare: 'number' },
      { name: 'imageUrl', label: 'Image URL', yours: text(sent.imageUrl), stored: text(now.imageUrl) },
      { name: 'optionsJson', label: 'Options', yours: text(sent.optionsJson), stored: text(now.optionsJson), compare: 'json' },
    ],
  });
}

/** The warehouse form sent against an older version, beside the warehouse as stored now. */
export function presentWarehouseConflict(sent: WarehouseForm, stored: Warehouse): EditConflictView {
  const now = warehouseFormOf(stored);
  const state = (status: string | undefined) => (status === '0' ? 'disabled' : 'enabled');
  return presentEditConflict({
    what: `Warehouse ${stored.code}`,
    action: `${PREFIX}/warehouses/${enc(stored.code)}/edit`,
    discard: { href: `${PREFIX}/warehouses/${enc(stored.code)}/edit`, text: 'Discard mine and edit the stored version' },
    storedVersion: stored.version,
    fields: [
      { name: 'name', label: 'Name', yours: text(sent.name), stored: text(now.name) },
      { name: 'countryCode', label: 'Country code', yours: text(sent.countryCode).toUpperCase(), stored: text(now.countryCode) },
      { name: 'countryName', label: 'Country name', yours: text(sent.countryName), stored: text(now.countryName) },
      { name: 'status', label: 'Status', yours: text(sent.status), stored: text(now.status), shown: { yours: state(sent.status), stored: state(now.status) } },
    ],
  });
}

/** The channel form sent against an older version, beside the channel as stored now. */
export function presentChannelConflict(sent: ChannelForm, stored: Channel, currency: string): EditConflictView {
  const now = channelFormOf(stored);
  return presentEditConflict({
    what: `Channel ${stored.code}`,
    action: `${PREFIX}/channels/${enc(stored.code)}/edit`,
    discard: { href: `${PREFIX}/channels/${enc(stored.code)}/edit`, text: 'Discard mine and edit the stored version' },
    storedVersion: stored.version,
    fields: [
      { name: 'name', label: 'Name', yours: text(sent.name), stored: text(now.name) },
      { name: 'channelType', label: 'Type', yours: text(sent.channelType), stored: text(now.channelType) },
      { name: 'warehouseCodes', label: 'Warehouses', yours: pickedWarehouses(sent), stored: pickedWarehouses(now), compare: 'set' },
      { name: 'countries', label: 'Destination countries', yours: text(sent.countries).toUpperCase(), stored: text(now.countries), compare: 'set' },
      { name: 'baseFee', label: `Base fee (${currency})`, yours: text(sent.baseFee), stored: text(now.baseFee), compare: 'number' },
      { name: 'perKgFee', label: `Fee per kg (${currency})`, yours: text(sent.perKgFee), stored: text(now.perKgFee), compare: 'number' },
      { name: 'deliveryDaysMin', label: 'Delivery days, at least', yours: text(sent.deliveryDaysMin), stored: text(now.deliveryDaysMin), compare: 'number' },
      { name: 'deliveryDaysMax', label: 'Delivery days, at most', yours: text(sent.deliveryDaysMax), stored: text(now.deliveryDaysMax), compare: 'number' },
      { name: 'carrierList', label: 'Carriers', yours: text(sent.carrierList), stored: text(now.carrierList) },
      { name: 'trackingUrlTemplate', label: 'Tracking URL', yours: text(sent.trackingUrlTemplate), stored: text(now.trackingUrlTemplate) },
    ],
  });
}
