import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { emptySection, type ImportProblem } from '../../src/domain/import-format.ts';
import type { ImportPreview } from '../../src/services/import.service.ts';
import type { Channel } from '../../src/store/channels.repository.ts';
import type { Product } from '../../src/store/products.repository.ts';
import type { Warehouse } from '../../src/store/warehouses.repository.ts';
import {
  channelFormOf,
  pickedWarehouses,
  presentChannelForm,
  presentChannels,
  presentImport,
  presentImportJob,
  presentImportPreview,
  presentProduct,
  presentProductForm,
  presentWarehouseForm,
  presentWarehouses,
  productFormOf,
  warehouseFormOf,
  type ImportJobInput,
  type ProductStockInput,
} from '../../src/web/console/present-catalog.ts';
import { CONSOLE_VIEWS } from '../../src/web/console/views.ts';

// The console's catalogue pages as models, without a template (issue 30, rule 3): money, times,
// counted nouns and links are made here; the templates only place them.

const AT = Date.UTC(2026, 4, 1, 14, 3, 7);
const AT_TIME = '<time datetime="2026-05-01T14:03:07Z" title="2026-05-01 14:03:07 UTC">2026-05-01 14:03 UTC</time>';

// Rows as the store gives them (only the columns the presenters read are meaningful).
const product = (extra: Partial<Product> = {}): Product =>
  ({
    id: 1,
    sku: 'A/1',
    name: 'Mug',
    category_id: 3,
    price_cents: 932,
    weight_grams: 350,
    image_url: 'https://img.example/a.jpg',
    options: '{"color":["red","blue"]}',
    version: 3,
    created_at: AT,
    updated_at: AT,
    ...extra,
  }) as Product;

const warehouse = (code: string, extra: Partial<Warehouse> = {}): Warehouse =>
  ({
    id: 1,
    code,
    name: `${code} hall`,
    country_code: 'DE',
    country_name: 'Germany',
    status: 1,
    version: 3,
    created_at: AT,
    updated_at: AT,
    ...extra,
  }) as Warehouse;

const channel = (extra: Partial<Channel> = {}): Channel =>
  ({
    id: 1,
    code: 'STD',
    name: 'Standard',
    channel_type: 'Standard',
    countries: '["US","CA"]',
    base_fee_cents: 500,
    per_kg_fee_cents: 1205,
    delivery_days_min: 3,
    delivery_days_max: 7,
    carriers: '["UPS","DHL"]',
    tracking_url_template: 'https://track.example/{trackingNo}',
    warehouseCodes: ['G007', 'US01'],
    version: 3,
    created_at: AT,
    updated_at: AT,
    ...extra,
  }) as Channel;

const stock = (extra: Partial<ProductStockInput> = {}): ProductStockInput => ({
  product: { sku: 'A/1', name: 'Mug', priceCents: 932, weightGrams: 350, categoryId: 3, imageUrl: 'https://img.example/a.jpg', options: '{"color":["red"]}' },
  warehouses: [
    { warehouseCode: 'G007', warehouseName: 'Yiwu', status: 1, qty: 10 },
    { warehouseCode: 'W9', warehouseName: 'Closed', status: 0, qty: 0 },
  ],
  history: [
    { id: 42, warehouseCode: 'G007', delta: 20, qtyAfter: 30, kind: 'restock', orderId: null, refundId: null, reason: 'count <b>', createdAt: AT },
    { id: 41, warehouseCode: 'G007', delta: -2, qtyAfter: 10, kind: 'sale', orderId: 1001, refundId: null, reason: null, createdAt: AT },
    { id: 40, warehouseCode: 'G007', delta: 1, qtyAfter: 12, kind: 'refund', orderId: 1001, refundId: 7, reason: '', createdAt: AT },
  ],
  nextBefore: 40,
  ...extra,
});

describe('the product page (views.product → ProductView)', () => {
  it('states the price with its currency, the weight, the facts; links the edit form for a role that edits', () => {
    const view = presentProduct(stock(), { currency: 'USD', canAdjust: false, canEdit: true });
    assert.equal(view.title, 'Stock of A/1');
    assert.equal(view.heading, 'A/1 · Mug');
    assert.equal(view.price, '9.32 USD');
    assert.equal(view.weight, '350 g');
    assert.equal(view.edit, '/console/products/A%2F1/edit', 'the SKU is a path segment');
    assert.deepEqual(
      [view.category, view.image, view.options],
      ['3', { href: 'https://img.example/a.jpg', text: 'https://img.example/a.jpg' }, '{"color":["red"]}'],
    );
    assert.equal(view.adjust, null, 'no form for a role that does not adjust');
    const bare = presentProduct(stock({ product: { ...stock().product, categoryId: null, imageUrl: null, options: null, priceCents: 5 } }), {
      currency: 'USD',
      canAdjust: false,
      canEdit: false,
    });
    assert.deepEqual([bare.category, bare.image, bare.options, bare.edit, bare.price], ['—', null, null, null, '0.05 USD']);
  });

  it('writes the stock per warehouse, a disabled one said so, and the adjustment form with what was typed', () => {
    const view = presentProduct(stock(), {
      currency: 'USD',
      canAdjust: true,
      canEdit: false,
      error: 'stock would go below zero',
      form: { warehouseCode: 'W9', delta: '-1000', reason: 'count' },
    });
    assert.deepEqual(view.warehouses, [
      { code: 'G007', name: 'Yiwu', qty: '10' },
      { code: 'W9', name: 'Closed (disabled)', qty: '0' },
    ]);
    assert.deepEqual(view.adjust, {
      action: '/console/products/A%2F1/adjust',
      warehouses: [
        { value: 'G007', text: 'G007 (10)', selected: false },
        { value: 'W9', text: 'W9 (0)', selected: true },
      ],
      delta: '-1000',
      reason: 'count',
    });
    assert.equal(view.error, 'stock would go below zero');
    assert.equal(view.adjusted, null);
  });

  it('says what an adjustment did, its change signed', () => {
    const plus = presentProduct(stock(), {
      currency: 'USD',
      canAdjust: true,
      canEdit: true,
      adjusted: { sku: 'B', warehouseCode: 'G006', delta: 20, qty: 25 },
    });
    assert.equal(plus.adjusted, 'Adjusted B in G006 by +20: now 25.');
    const minus = presentProduct(stock(), {
      currency: 'USD',
      canAdjust: true,
      canEdit: true,
      adjusted: { sku: 'B', warehouseCode: 'G006', delta: -2, qty: 5 },
    });
    assert.equal(minus.adjusted, 'Adjusted B in G006 by -2: now 5.');
  });

  it('lists the history with times as <time>, changes signed, why (order, refund, the reason typed) and the older page', () => {
    const view = presentProduct(stock(), { currency: 'USD', canAdjust: false, canEdit: false });
    assert.deepEqual(view.history[0], { id: '42', when: AT_TIME, warehouse: 'G007', delta: '+20', qtyAfter: '30', why: 'restock', reason: 'count <b>' });
    assert.equal(view.history[0].reason, 'count <b>', 'typed text stays text (the template escapes it)');
    assert.deepEqual([view.history[1].delta, view.history[1].why, view.history[1].reason], ['-2', 'sale · order 1001', null]);
    assert.deepEqual([view.history[2].why, view.history[2].reason], ['refund · order 1001 · refund 7', null], 'an empty reason is none');
    assert.equal(view.older, '/console/products/A%2F1?before=40');
    assert.equal(presentProduct(stock({ history: [], nextBefore: null }), { currency: 'USD', canAdjust: false, canEdit: false }).older, null);
  });
});

describe('the product form (views["product-form"] → ProductFormView)', () => {
  const categories = [
    { id: 3, name: 'Kitchen' },
    { id: 4, name: 'Garden' },
  ];

  it('a saved product as the operator would type it again: the price in major units, the options as indented JSON', () => {
    assert.deepEqual(productFormOf(product()), {
      version: '3',
      sku: 'A/1',
      name: 'Mug',
      categoryId: '3',
      price: '9.32',
      weightGrams: '350',
      imageUrl: 'https://img.example/a.jpg',
      optionsJson: '{\n  "color": [\n    "red",\n    "blue"\n  ]\n}',
    });
    assert.deepEqual(
      [
        productFormOf(product({ price_cents: 2450 })).price,
        productFormOf(product({ price_cents: 7 })).price,
        productFormOf(product({ price_cents: 100 })).price,
      ],
      ['24.50', '0.07', '1.00'],
    );
    const none = productFormOf(product({ category_id: null, image_url: null, options: null }));
    assert.deepEqual([none.categoryId, none.imageUrl, none.optionsJson], ['', '', '']);
  });

  it('create: posts to New product, back to the catalogue, the category chosen, a field not sent is blank', () => {
    const view = presentProductForm('create', { sku: 'T1', name: 'Tea', categoryId: '4', price: '2' }, categories, 'EUR');
    assert.equal(view.title, 'New product');
    assert.equal(view.create, true);
    assert.equal(view.action, '/console/new-product');
    assert.deepEqual(view.back, { href: '/console/products', text: 'Catalogue & stock' });
    assert.equal(view.submit, 'Create product');
    assert.deepEqual(view.categories, [
      { value: '3', text: '3 · Kitchen', selected: false },
      { value: '4', text: '4 · Garden', selected: true },
    ]);
    assert.deepEqual(view.values, { sku: 'T1', name: 'Tea', price: '2', weightGrams: '', imageUrl: '', optionsJson: '' });
    assert.deepEqual([view.refused, view.invalid, view.editExisting], [null, [], null]);
    assert.equal(view.currency, 'EUR', "the price is in the supplier's currency, as configured");
  });

  it('a refusal: its sentence, the fields it names; a SKU in use links that product’s edit form', () => {
    const refused = presentProductForm('create', productFormOf(product()), categories, 'EUR', {
      message: 'price must be a price',
      fields: { price: 'must be a price' },
    });
    assert.equal(refused.refused, 'price must be a price');
    assert.deepEqual(refused.invalid, ['price']);
    assert.equal(refused.editExisting, null);
    const taken = presentProductForm('create', productFormOf(product()), categories, 'EUR', { message: 'product A/1 exists already', fields: {} });
    assert.deepEqual(taken.editExisting, { href: '/console/products/A%2F1/edit', text: 'Edit A/1' });
    const edit = presentProductForm('update', productFormOf(product()), categories, 'EUR', { message: 'product A/1 exists already', fields: {} });
    assert.equal(edit.editExisting, null, 'only a create form offers it');
  });

  it('update: titled and posted by its SKU, back to the product’s page', () => {
    const view = presentProductForm('update', productFormOf(product()), categories, 'EUR');
    assert.equal(view.title, 'Edit A/1');
    assert.equal(view.create, false);
    assert.equal(view.action, '/console/products/A%2F1/edit');
    assert.deepEqual(view.back, { href: '/console/products/A%2F1', text: 'A/1' });
    assert.equal(view.submit, 'Save product');
    assert.equal(view.categories[0].selected, true);
  });
});

describe('warehouses (views.warehouses, views["warehouse-form"])', () => {
  it('lists each warehouse: its country code and name, enabled or disabled, its edit link', () => {
    const view = presentWarehouses([warehouse('G007'), warehouse('W 9', { status: 0, country_code: 'FR', country_name: 'France' })]);
    assert.equal(view.title, 'Warehouses');
    assert.deepEqual(view.rows, [
      { code: 'G007', name: 'G007 hall', country: 'DE · Germany', status: 'enabled', statusText: 'Enabled', edit: '/console/warehouses/G007/edit' },
      { code: 'W 9', name: 'W 9 hall', country: 'FR · France', status: 'disabled', statusText: 'Disabled', edit: '/console/warehouses/W%209/edit' },
    ]);
    assert.deepEqual(presentWarehouses([]).rows, []);
  });

  it('the form: create or edit, the status chosen, a refusal’s fields', () => {
    const create = presentWarehouseForm('create', { warehouseCode: '', name: '', countryCode: '', countryName: '', status: '1' });
    assert.deepEqual(
      [create.title, create.action, create.submit, create.enabled, create.create],
      ['New warehouse', '/console/warehouses/new', 'Create warehouse', true, true],
    );
    const form = warehouseFormOf(warehouse('W9', { status: 0 }));
    assert.deepEqual(form, { version: '3', warehouseCode: 'W9', name: 'W9 hall', countryCode: 'DE', countryName: 'Germany', status: '0' });
    const edit = presentWarehouseForm('update', form, { message: 'countryCode must be 2 letters', fields: { countryCode: 'must be 2 letters' } });
    assert.deepEqual(
      [edit.title, edit.action, edit.submit, edit.enabled, edit.create],
      ['Edit warehouse W9', '/console/warehouses/W9/edit', 'Save warehouse', false, false],
    );
    assert.deepEqual([edit.refused, edit.invalid], ['countryCode must be 2 letters', ['countryCode']]);
    assert.deepEqual([create.version, edit.version], [null, '3'], 'an edit form carries the version it was read at, a create form none');
    assert.deepEqual(presentWarehouseForm('create', {}).values, { warehouseCode: '', name: '', countryCode: '', countryName: '' }, 'fields not sent are blank');
  });
});

describe('channels (views.channels, views["channel-form"])', () => {
  it('lists each channel: its warehouses, countries and carriers as lists, — for none, its edit link', () => {
    const view = presentChannels([channel(), channel({ code: 'EXP', carriers: '[]', tracking_url_template: null, countries: '["*"]', warehouseCodes: [] })]);
    assert.equal(view.title, 'Channels');
    assert.deepEqual(view.rows, [
      {
        code: 'STD',
        name: 'Standard',
        type: 'Standard',
        warehouses: 'G007, US01',
        countries: 'US, CA',
        carriers: 'UPS, DHL',
        tracking: 'https://track.example/{trackingNo}',
        edit: '/console/channels/STD/edit',
      },
      { code: 'EXP', name: 'Standard', type: 'Standard', warehouses: '', countries: '*', carriers: '—', tracking: '—', edit: '/console/channels/EXP/edit' },
    ]);
  });

  it('a saved channel as the operator would type it again: fees in major units, carriers a line each', () => {
    assert.deepEqual(channelFormOf(channel()), {
      version: '3',
      channelCode: 'STD',
      name: 'Standard',
      channelType: 'Standard',
      warehouseCodes: ['G007', 'US01'],
      countries: 'US, CA',
      baseFee: '5.00',
      perKgFee: '12.05',
      deliveryDaysMin: '3',
      deliveryDaysMax: '7',
      carrierList: 'UPS\nDHL',
      trackingUrlTemplate: 'https://track.example/{trackingNo}',
    });
    assert.equal(channelFormOf(channel({ tracking_url_template: null })).trackingUrlTemplate, '');
  });

  it('the form: the type chosen, each warehouse ticked as the form was (none, one, several)', () => {
    assert.deepEqual(
      [pickedWarehouses({}), pickedWarehouses({ warehouseCodes: 'G007' }), pickedWarehouses({ warehouseCodes: ['G007', 'US01'] })],
      [[], ['G007'], ['G007', 'US01']],
    );
    const warehouses = [warehouse('G007'), warehouse('US01')];
    const edit = presentChannelForm('update', channelFormOf(channel({ channel_type: 'Express', warehouseCodes: ['US01'] })), warehouses, 'EUR');
    assert.deepEqual([edit.title, edit.action, edit.submit, edit.create], ['Edit channel STD', '/console/channels/STD/edit', 'Save channel', false]);
    assert.deepEqual(edit.types, [
      { value: 'Standard', selected: false },
      { value: 'Express', selected: true },
      { value: 'Expedited', selected: false },
    ]);
    assert.deepEqual(edit.warehouses, [
      { code: 'G007', text: 'G007 · G007 hall', checked: false },
      { code: 'US01', text: 'US01 · US01 hall', checked: true },
    ]);
    assert.equal(edit.values.baseFee, '5.00');
    const refused = presentChannelForm('create', { channelCode: 'N1', warehouseCodes: 'G007', baseFee: 'x' }, warehouses, 'EUR', {
      message: 'baseFee must be an amount; carrierList has too many',
      fields: { baseFee: 'must be an amount', carrierList: 'has too many' },
    });
    assert.deepEqual([refused.title, refused.action, refused.submit], ['New channel', '/console/channels/new', 'Create channel']);
    assert.deepEqual(refused.invalid, ['baseFee', 'carrierList']);
    assert.equal(refused.values.baseFee, 'x', 'what was typed comes back');
    assert.equal(refused.values.name, '', 'a field not sent is blank');
    assert.deepEqual(
      refused.warehouses.map((w) => w.checked),
      [true, false],
    );
  });
});

describe('import (views.import, views["import-job"], views["import-preview"])', () => {
  it('the upload form names the CSV headers and keeps the file name of a refused upload', () => {
    const view = presentImport('owner');
    assert.equal(view.title, 'Import');
    assert.match(view.formats.products, /^sku,name,price,weightGrams\[,.+\]$/);
    assert.equal(view.formats.stocks, 'sku,warehouseCode,qty');
    assert.deepEqual([view.fileName, view.error, view.limit], ['', null, null]);
    const busy = presentImport('owner', { fileName: 'stock.csv', error: 'Another import is running' });
    assert.deepEqual([busy.fileName, busy.error], ['stock.csv', 'Another import is running']);
  });

  it('says what a role may not import (issue 44, 10)', () => {
    assert.equal(
      presentImport('warehouse').limit,
      'Your role (warehouse) imports stocks only: a file with rows of warehouses, categories, products or channels is refused, and the dry run lists those rows.',
    );
    assert.match(presentImport('support').limit!, /imports nothing/);
  });

  const job = (extra: Partial<ImportJobInput>): ImportJobInput => ({
    id: 'J'.repeat(24),
    fileName: 'stock.csv',
    state: 'running',
    progress: null,
    result: null,
    problems: [],
    omitted: 0,
    message: null,
    ...extra,
  });

  it('a running import: its page polled, the rows read once known, the bytes as the bar', () => {
    const start = presentImportJob(job({}));
    assert.equal(start.title, 'Import of stock.csv');
    assert.equal(start.href, `/console/import/${'J'.repeat(24)}`);
    assert.deepEqual(start.running, { rowsRead: null, max: '1', value: '0' });
    assert.deepEqual([start.done, start.refused, start.failed], [null, null, null]);
    const later = presentImportJob(job({ progress: { file: 'stock.csv', bytesRead: 512, totalBytes: 2048, rows: 12 } }));
    assert.deepEqual(later.running, { rowsRead: '12 rows read.', max: '2048', value: '512' });
  });

  it('a finished import counts what it wrote, one or many, or nothing new', () => {
    const result = { files: 1, rows: 3, ledgerRows: 3, warehouses: 0, categories: 0, products: 1, stocks: 3, channels: 0 };
    assert.deepEqual(presentImportJob(job({ state: 'done', result })).done, {
      imported: 'Imported 3 rows',
      what: '1 products, 3 stocks',
      ledgerRows: '3',
      ledgerNoun: 'stock changes',
    });
    const one = presentImportJob(job({ state: 'done', result: { ...result, rows: 1, ledgerRows: 1, products: 0, stocks: 1 } }));
    assert.deepEqual(one.done, { imported: 'Imported 1 row', what: '1 stocks', ledgerRows: '1', ledgerNoun: 'stock change' });
    const none = presentImportJob(job({ state: 'done', result: { ...result, rows: 0, ledgerRows: 0, products: 0, stocks: 0 } }));
    assert.equal(none.done?.what, 'nothing new');
    assert.equal(none.running, null);
  });

  it('a refused import lists each bad row by line (– for none) and counts the ones left out', () => {
    const problems: ImportProblem[] = [
      { file: 'stock.csv', line: 3, field: 'warehouseCode', message: 'unknown warehouse NOPE' },
      { file: 'stock.csv', field: '', message: 'the file is empty' },
    ];
    const view = presentImportJob(job({ state: 'refused', problems, omitted: 4 }));
    assert.deepEqual(view.refused, {
      summary: 'Nothing was imported: 6 problems.',
      problems: [
        { line: '3', lineText: '3', field: 'warehouseCode', message: 'unknown warehouse NOPE' },
        { line: '', lineText: '–', field: '–', message: 'the file is empty' },
      ],
      more: '… and 4 more.',
    });
    assert.equal(presentImportJob(job({ state: 'refused', problems: problems.slice(0, 1) })).refused?.summary, 'Nothing was imported: 1 problem.');
    assert.equal(presentImportJob(job({ state: 'refused', problems })).refused?.more, null);
    assert.equal(presentImportJob(job({ state: 'failed', message: 'not valid JSON' })).failed, 'not valid JSON');
  });

  const preview = (extra: Partial<ImportPreview>): { id: string; fileName: string; result: ImportPreview } => ({
    id: 'P'.repeat(24),
    fileName: 'p.csv',
    result: {
      rows: 3,
      sections: { warehouses: emptySection(), categories: emptySection(), products: emptySection(), stocks: emptySection(), channels: emptySection() },
      problems: [],
      omitted: 0,
      ...extra,
    },
  });

  it('a dry run: counts per section with rows, each change before → after, money fields in major units without “Cents”, — for none', () => {
    const p = preview({});
    p.result.sections.products = {
      created: 1,
      changed: 1,
      unchanged: 1,
      rows: [
        {
          key: 'A',
          kind: 'changed',
          changes: [
            { field: 'priceCents', before: 932, after: 1000 },
            { field: 'imageUrl', before: null, after: 'https://img/a.jpg' },
          ],
        },
        {
          key: 'DRY-1',
          kind: 'new',
          changes: [
            { field: 'name', before: null, after: 'Dry teapot' },
            { field: 'priceCents', before: null, after: 500 },
          ],
        },
      ],
    };
    p.result.sections.stocks = {
      created: 0,
      changed: 1,
      unchanged: 0,
      rows: [{ key: 'A @ G007', kind: 'changed', changes: [{ field: 'qty', before: 10, after: 12 }] }],
    };
    p.result.sections.channels = {
      created: 0,
      changed: 1,
      unchanged: 0,
      rows: [
        {
          key: 'EXP',
          kind: 'changed',
          changes: [
            { field: 'carriers', before: '', after: 'Chronopost' },
            { field: 'baseFeeCents', before: 800, after: -5 },
          ],
        },
      ],
    };
    const view = presentImportPreview(p);
    assert.equal(view.title, 'Dry run of p.csv');
    assert.equal(view.rowsRead, '3 rows read.');
    assert.deepEqual(view.counts, [
      { key: 'products', label: 'Products', created: '1', changed: '1', unchanged: '1' },
      { key: 'stocks', label: 'Stock levels', created: '0', changed: '1', unchanged: '0' },
      { key: 'channels', label: 'Channels', created: '0', changed: '1', unchanged: '0' },
    ]);
    assert.deepEqual(
      view.sections.map((s) => [s.key, s.label, s.keyHeading, s.showing]),
      [
        ['products', 'Products', 'Row', null],
        ['stocks', 'Stock levels', 'SKU @ warehouse', null],
        ['channels', 'Channels', 'Row', null],
      ],
    );
    const [products, stocks, channels] = view.sections;
    assert.deepEqual(products.rows[0], {
      key: 'A',
      kind: 'changed',
      changes: [
        { field: 'priceCents', label: 'price', before: '9.32', after: '10.00' },
        { field: 'imageUrl', label: 'imageUrl', before: '—', after: 'https://img/a.jpg' },
      ],
    });
    assert.deepEqual(products.rows[1].changes, [
      { field: 'name', label: 'name', before: null, after: 'Dry teapot' },
      { field: 'priceCents', label: 'price', before: null, after: '5.00' },
    ]);
    assert.deepEqual(stocks.rows[0].changes, [{ field: 'qty', label: 'qty', before: '10', after: '12' }]);
    assert.deepEqual(channels.rows[0].changes, [
      { field: 'carriers', label: 'carriers', before: '—', after: 'Chronopost' },
      { field: 'baseFeeCents', label: 'baseFee', before: '8.00', after: '-0.05' },
    ]);
    assert.deepEqual(view.apply, {
      text: 'Applying imports the file as shown: 4 rows created or changed, all or nothing.',
      action: `/console/import/preview/${'P'.repeat(24)}/apply`,
    });
    assert.equal(view.problems, null);
    assert.equal(view.error, null);
  });

  it('a dry run with problems lists them (file, line, field) and offers no Apply; beyond the rows shown it says so', () => {
    const p = preview({
      rows: 1,
      problems: [
        { file: 'p.csv', line: 4, field: 'price', message: 'must be an amount' },
        { file: 'doc.json', field: '', message: 'not valid JSON' },
      ],
      omitted: 2,
    });
    p.result.sections.stocks = {
      created: 600,
      changed: 12,
      unchanged: 0,
      rows: [{ key: 'A @ G007', kind: 'new', changes: [{ field: 'qty', before: null, after: 3 }] }],
    };
    const view = presentImportPreview(p, 'Another import is running');
    assert.equal(view.rowsRead, '1 row read.');
    assert.deepEqual(view.problems, {
      summary: 'Importing this file would write nothing: 4 problems.',
      list: [
        { line: '4', where: 'p.csv line 4', field: 'price', message: 'must be an amount' },
        { line: '', where: 'doc.json', field: null, message: 'not valid JSON' },
      ],
      more: '… and 2 more.',
    });
    assert.equal(view.apply, null);
    assert.equal(view.sections[0].showing, 'Showing the first 1 of 612.');
    assert.equal(view.error, 'Another import is running');
  });

  it('a dry run that changes nothing says applying only records the import; one change is one row', () => {
    assert.equal(presentImportPreview(preview({ rows: 1 })).apply?.text, 'The file changes nothing; applying it only records the import.');
    const one = preview({});
    one.result.sections.stocks = {
      created: 1,
      changed: 0,
      unchanged: 0,
      rows: [{ key: 'A @ G007', kind: 'new', changes: [{ field: 'qty', before: null, after: 1 }] }],
    };
    assert.match(presentImportPreview(one).apply!.text, /: 1 row created or changed,/);
  });
});

describe('the catalogue views are typed and their templates only place values', () => {
  const web = path.join(import.meta.dirname, '../../src/web');
  const mine = ['import', 'import-job', 'import-preview', 'channels', 'channel-form', 'warehouses', 'warehouse-form', 'product', 'product-form'] as const;

  it('each is registered typed; no template formats money, a time or an id, or reads what untyped views get', () => {
    for (const name of mine) {
      const spec = CONSOLE_VIEWS[name];
      const text = fs.readFileSync(path.join(web, `${spec.template}.eta`), 'utf8');
      assert.doesNotMatch(text, /toFixed|toLocale|it\.time\(|\/ 100|Cents|new Date|encodeURIComponent|it\.user\b|it\.nav\b|it\.environment\b/, name);
      // Markup printed unescaped only from a presenter's Html (the history's <time>).
      for (const [raw] of text.matchAll(/<%~[^%]*%>/g)) assert.match(raw, /^<%~ (h\.when|include\(.*\)) %>$/, `${name}: ${raw}`);
    }
  });
});
