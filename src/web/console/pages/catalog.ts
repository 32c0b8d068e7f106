import { AppError, fieldError } from '../../../domain/errors.ts';
import { httpStatus } from '../../../http/errors.ts';
import { FormAlreadySent } from '../../../domain/form-keys.ts';
import { parseStockChange } from '../../../domain/stock-adjustment.ts';
import { can } from '../../../domain/staff.ts';
import { ConsoleSkuParams, ProductSearchQuery, StockAdjustForm, StockHistoryQuery } from '../../../schemas/console.ts';
import { productStock, searchCatalog, stockCsv } from '../../../services/stock-history.service.ts';
import { adjustStockLevels, type StockResult } from '../../../services/stock.service.ts';
import { sendCsv } from '../../csv.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentProduct } from '../present-catalog.ts';
import { presentProducts } from '../present.ts';
import type { ConsolePage } from './context.ts';

/**
 * Catalogue and stock: product search with stock per warehouse, one SKU's stock and its ledger
 * history (keyset paging), and a stock adjustment with a reason (stock:adjust; audited).
 */
export const catalogPage: ConsolePage = {
  nav: [{ href: `${CONSOLE_PREFIX}/products`, label: 'Catalogue & stock', permission: 'stock:adjust' }],
  routes: async (app, { config, store, now, page, forms, user, actor }) => {
    app.get('/products', { schema: { querystring: ProductSearchQuery } }, async (request, reply) => {
      const q = (request.query.q ?? '').trim();
      const results = await searchCatalog(store.db, q, request.query.after ?? null);
      return page(reply, 200, 'products', presentProducts(q, results, config.supplierCurrency, can(user(request).role, 'catalog:write')));
    });

    // The search's products and their stock per warehouse as a CSV file (the page's `q`; every page).
    app.get('/products.csv', { schema: { querystring: ProductSearchQuery } }, async (request, reply) =>
      sendCsv(reply, stockCsv(store.db, (request.query.q ?? '').trim()), now()),
    );

    /** One SKU's page: its stock and a page of its history, with what the last adjustment did or why it was refused. */
    const productView = async (sku: string, beforeId: number | null, options: Omit<Parameters<typeof presentProduct>[1], 'currency'>) =>
      presentProduct(await productStock(store.db, sku, beforeId), { currency: config.supplierCurrency, ...options });

    app.get('/products/:sku', { schema: { params: ConsoleSkuParams, querystring: StockHistoryQuery } }, async (request, reply) => {
      const before = request.query.before ?? null;
      // The answer to an adjustment (POST → 303 → here) is shown once.
      const adjusted = await forms.take<StockResult>(request, 'adjusted');
      return page(
        reply,
        200,
        'product',
        await productView(request.params.sku, before, {
          canAdjust: can(user(request).role, 'stock:adjust'),
          canEdit: can(user(request).role, 'catalog:write'),
          adjusted,
        }),
      );
    });

    app.post('/products/:sku/adjust', { schema: { params: ConsoleSkuParams, body: StockAdjustForm } }, async (request, reply) => {
      const { sku } = request.params;
      const { warehouseCode, delta, reason } = request.body;
      try {
        const change = parseStockChange(delta);
        if ('problem' in change) throw fieldError('delta', change.problem);
        const [result] = await adjustStockLevels(store.db, actor(request), [{ sku, warehouseCode, delta: change.delta }], now(), reason);
        await forms.flash(request, 'adjusted', result);
        return reply.redirect(`${CONSOLE_PREFIX}/products/${encodeURIComponent(sku)}`, 303);
      } catch (error) {
        if (!(error instanceof AppError) || error.kind === 'not_found' || error instanceof FormAlreadySent) throw error;
        // The form comes back with what was typed and why it was refused; nothing was written.
        const why = error.errors?.length ? error.errors.map((e) => e.message).join('; ') : error.message;
        return page(
          reply,
          httpStatus(error),
          'product',
          await productView(sku, null, { canAdjust: true, canEdit: false, error: why, form: { warehouseCode, delta, reason } }),
        );
      }
    });
  },
};
