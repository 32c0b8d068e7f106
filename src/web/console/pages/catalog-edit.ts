import { httpStatus } from '../../../http/errors.ts';
import type { FastifyReply } from 'fastify';
import { AppError, type FieldError, fieldError, isRefusal } from '../../../domain/errors.ts';
import { formVersion } from '../../../domain/edit-versions.ts';
import { FormAlreadySent } from '../../../domain/form-keys.ts';
import { ChannelBody, ProductBody, WarehouseBody } from '../../../schemas/admin.ts';
import { ChannelCodeParams, ChannelForm, ConsoleSkuParams, ProductForm, WarehouseCodeParams, WarehouseForm } from '../../../schemas/console.ts';
import { parseDocument } from '../../../schemas/validate.ts';
import {
  channelByCode,
  listCategories,
  listChannels,
  listWarehouses,
  productBySku,
  saveChannel,
  saveProduct,
  saveWarehouse,
  warehouseByCode,
} from '../../../services/catalog.service.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import {
  channelFormOf,
  pickedWarehouses,
  presentChannelForm,
  presentChannels,
  presentProductForm,
  presentWarehouseForm,
  presentWarehouses,
  presentChannelConflict,
  presentProductConflict,
  presentWarehouseConflict,
  productFormOf,
  warehouseFormOf,
  type FormRefusal,
} from '../present-catalog.ts';
import type { ConsolePage } from './context.ts';

const P = CONSOLE_PREFIX;

/** `body.price` / `price` / `warehouseCodes[1]` → the form field the person fixes. */
const formField = (field: string, rename: Record<string, string>) => {
  const name = field.replace(/^body\.?/, '').replace(/\[\d+\]$/, '');
  return rename[name] ?? name;
};

/** A refused form: the reason per field (the field names of the form), and a sentence for the top. */
function refusalOf(error: AppError, rename: Record<string, string> = {}): FormRefusal {
  const errors: FieldError[] = error.errors ?? [];
  const fields: Record<string, string> = {};
  for (const e of errors) fields[formField(e.field, rename)] ??= e.message;
  const message = errors.length ? errors.map((e) => `${formField(e.field, rename)} ${e.message}`).join('; ') : error.message;
  return { message, fields };
}

/** Blank → absent, so the API schema's own "required" and defaults apply. */
const given = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

/** The product form's text as the operator API's body; `optionsJson` must be a JSON object (or empty). */
function productBody(form: ProductForm, sku: string): ProductBody {
  let options: unknown = null;
  const json = form.optionsJson?.trim() ?? '';
  if (json !== '') {
    try {
      options = JSON.parse(json);
    } catch {
      throw fieldError('optionsJson', 'must be a JSON object, e.g. {"color": ["red", "blue"]}, or empty');
    }
    if (options === null || typeof options !== 'object' || Array.isArray(options))
      throw fieldError('optionsJson', 'must be a JSON object, e.g. {"color": ["red", "blue"]}, or empty');
  }
  const body = {
    sku,
    name: given(form.name),
    categoryId: given(form.categoryId) ?? null,
    price: given(form.price),
    weightGrams: given(form.weightGrams),
    imageUrl: given(form.imageUrl) ?? null,
    options,
  };
  return parseDocument<ProductBody>(ProductBody, Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));
}

function warehouseBody(form: WarehouseForm, code: string): WarehouseBody {
  const body = {
    warehouseCode: code,
    name: given(form.name),
    countryCode: given(form.countryCode),
    countryName: given(form.countryName),
    status: given(form.status),
  };
  return parseDocument<WarehouseBody>(WarehouseBody, Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));
}

const listOf = (text: string | undefined) => (text ?? '').split(/[\s,]+/).filter((s) => s !== '');

function channelBody(form: ChannelForm, code: string): ChannelBody {
  const warehouseCodes = pickedWarehouses(form);
  const body = {
    channelCode: code,
    name: given(form.name),
    channelType: given(form.channelType),
    warehouseCodes,
    countries: listOf(form.countries),
    baseFee: given(form.baseFee),
    perKgFee: given(form.perKgFee),
    deliveryDaysMin: given(form.deliveryDaysMin),
    deliveryDaysMax: given(form.deliveryDaysMax),
    carriers: (form.carrierList ?? '')
      .split(/\r?\n/)
      .map((c) => c.trim())
      .filter((c) => c !== ''),
    trackingUrlTemplate: given(form.trackingUrlTemplate) ?? null,
  };
  return parseDocument<ChannelBody>(ChannelBody, Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));
}

/**
 * Catalogue editing (catalog:write, owner): create and edit a product, a warehouse and a logistics
 * channel in the console, through the operator API's services and schemas (one rule for both).
 * Each save is audited (`product.save`, `warehouse.save`, `channel.save`, before and after) and
 * answers 303 to a page that says so once; a refused form comes back with what was typed and the
 * reason per field, at the refusal's status, and nothing was written. A create form never
 * overwrites: a code in use is refused (409) with a link to its edit page. An edit form carries the
 * version it was read at; saved against one that is no longer stored (another tab or operator saved
 * meanwhile), it writes nothing and answers 409 with both versions (docs/web.md, "Edit conflicts").
 */
export const catalogEditPage: ConsolePage = {
  nav: [
    { href: `${P}/warehouses`, label: 'Warehouses', permission: 'catalog:write' },
    { href: `${P}/channels`, label: 'Channels', permission: 'catalog:write' },
  ],
  routes: async (app, { config, store, now, page, forms, actor }) => {
    const { db } = store;

    /**
     * Runs a save; a refusal (400/404/409 of ours) re-renders the form via `again`, else 303 to
     * `done` with a notice. An edit made against a version that is no longer the stored one (the
     * service's 412) is answered by `conflict`: the page with both versions, at 409.
     */
    const saving = async (
      reply: FastifyReply,
      save: () => Promise<{ href: string; notice: string }>,
      again: (status: number, refusal: FormRefusal) => Promise<unknown>,
      rename: Record<string, string> = {},
      conflict?: () => Promise<unknown>,
    ) => {
      try {
        const { href, notice } = await save();
        await forms.flash(reply.request, 'notice', { text: notice });
        return reply.redirect(href, 303);
      } catch (error) {
        if (!(error instanceof AppError) || error instanceof FormAlreadySent || !isRefusal(error)) throw error;
        if (error.kind === 'precondition_failed' && conflict) return conflict();
        return again(httpStatus(error), refusalOf(error, rename));
      }
    };

    // ---- Products: the list and a product's stock page are catalog.ts's; these are the forms.

    const productForm = async (reply: FastifyReply, status: number, mode: 'create' | 'update', form: ProductForm, refusal: FormRefusal | null = null) =>
      page(reply, status, 'product-form', presentProductForm(mode, form, await listCategories(db), config.supplierCurrency, refusal));

    app.get('/new-product', async (_request, reply) =>
      productForm(reply, 200, 'create', { sku: '', name: '', categoryId: '', price: '', weightGrams: '', imageUrl: '', optionsJson: '' }),
    );

    app.post('/new-product', { schema: { body: ProductForm } }, async (request, reply) => {
      const form = request.body;
      return saving(
        reply,
        async () => {
          const saved = await saveProduct(db, actor(request), productBody(form, form.sku?.trim() ?? ''), now(), 'create');
          return { href: `${P}/products/${encodeURIComponent(saved.sku)}`, notice: `Product ${saved.sku} created.` };
        },
        (status, refusal) => productForm(reply, status, 'create', form, refusal),
      );
    });

    app.get('/products/:sku/edit', { schema: { params: ConsoleSkuParams } }, async (request, reply) =>
      productForm(reply, 200, 'update', productFormOf(await productBySku(db, request.params.sku))),
    );

    app.post('/products/:sku/edit', { schema: { params: ConsoleSkuParams, body: ProductForm } }, async (request, reply) => {
      const { sku } = request.params;
      await productBySku(db, sku);
      const form = { ...request.body, sku };
      return saving(
        reply,
        async () => {
          const saved = await saveProduct(db, actor(request), productBody(form, sku), now(), 'update', formVersion(form.version));
          return { href: `${P}/products/${encodeURIComponent(saved.sku)}`, notice: `Product ${saved.sku} saved.` };
        },
        (status, refusal) => productForm(reply, status, 'update', form, refusal),
        {},
        async () =>
          page(reply, 409, 'edit-conflict', presentProductConflict(form, await productBySku(db, sku), await listCategories(db), config.supplierCurrency)),
      );
    });

    // ---- Warehouses.

    app.get('/warehouses', async (_request, reply) => page(reply, 200, 'warehouses', presentWarehouses(await listWarehouses(db))));

    const warehouseForm = async (reply: FastifyReply, status: number, mode: 'create' | 'update', form: WarehouseForm, refusal: FormRefusal | null = null) =>
      page(reply, status, 'warehouse-form', presentWarehouseForm(mode, form, refusal));

    app.get('/warehouses/new', async (_request, reply) =>
      warehouseForm(reply, 200, 'create', { warehouseCode: '', name: '', countryCode: '', countryName: '', status: '1' }),
    );

    app.post('/warehouses/new', { schema: { body: WarehouseForm } }, async (request, reply) => {
      const form = request.body;
      return saving(
        reply,
        async () => {
          const saved = await saveWarehouse(db, actor(request), warehouseBody(form, form.warehouseCode?.trim() ?? ''), now(), 'create');
          return { href: `${P}/warehouses`, notice: `Warehouse ${saved.code} created.` };
        },
        (status, refusal) => warehouseForm(reply, status, 'create', form, refusal),
      );
    });

    app.get('/warehouses/:code/edit', { schema: { params: WarehouseCodeParams } }, async (request, reply) =>
      warehouseForm(reply, 200, 'update', warehouseFormOf(await warehouseByCode(db, request.params.code))),
    );

    app.post('/warehouses/:code/edit', { schema: { params: WarehouseCodeParams, body: WarehouseForm } }, async (request, reply) => {
      const { code } = request.params;
      await warehouseByCode(db, code);
      const form = { ...request.body, warehouseCode: code };
      return saving(
        reply,
        async () => {
          const saved = await saveWarehouse(db, actor(request), warehouseBody(form, code), now(), 'update', formVersion(form.version));
          return { href: `${P}/warehouses`, notice: `Warehouse ${saved.code} saved.` };
        },
        (status, refusal) => warehouseForm(reply, status, 'update', form, refusal),
        {},
        async () => page(reply, 409, 'edit-conflict', presentWarehouseConflict(form, await warehouseByCode(db, code))),
      );
    });

    // ---- Logistics channels.

    app.get('/channels', async (_request, reply) => page(reply, 200, 'channels', presentChannels(await listChannels(db))));

    const channelForm = async (reply: FastifyReply, status: number, mode: 'create' | 'update', form: ChannelForm, refusal: FormRefusal | null = null) =>
      page(reply, status, 'channel-form', presentChannelForm(mode, form, await listWarehouses(db), config.supplierCurrency, refusal));
    // API field names → the form's.
    const channelFields = { carriers: 'carrierList' };

    app.get('/channels/new', async (_request, reply) =>
      channelForm(reply, 200, 'create', {
        channelCode: '',
        name: '',
        channelType: 'Standard',
        warehouseCodes: [],
        countries: '*',
        baseFee: '',
        perKgFee: '',
        deliveryDaysMin: '',
        deliveryDaysMax: '',
        carrierList: '',
        trackingUrlTemplate: '',
      }),
    );

    app.post('/channels/new', { schema: { body: ChannelForm } }, async (request, reply) => {
      const form = request.body;
      return saving(
        reply,
        async () => {
          const saved = await saveChannel(db, actor(request), channelBody(form, form.channelCode?.trim() ?? ''), now(), 'create');
          return { href: `${P}/channels`, notice: `Channel ${saved.code} created.` };
        },
        (status, refusal) => channelForm(reply, status, 'create', form, refusal),
        channelFields,
      );
    });

    app.get('/channels/:code/edit', { schema: { params: ChannelCodeParams } }, async (request, reply) =>
      channelForm(reply, 200, 'update', channelFormOf(await channelByCode(db, request.params.code))),
    );

    app.post('/channels/:code/edit', { schema: { params: ChannelCodeParams, body: ChannelForm } }, async (request, reply) => {
      const { code } = request.params;
      await channelByCode(db, code);
      const form = { ...request.body, channelCode: code };
      return saving(
        reply,
        async () => {
          const saved = await saveChannel(db, actor(request), channelBody(form, code), now(), 'update', formVersion(form.version));
          return { href: `${P}/channels`, notice: `Channel ${saved.code} saved.` };
        },
        (status, refusal) => channelForm(reply, status, 'update', form, refusal),
        channelFields,
        async () => page(reply, 409, 'edit-conflict', presentChannelConflict(form, await channelByCode(db, code), config.supplierCurrency)),
      );
    });
  },
};
