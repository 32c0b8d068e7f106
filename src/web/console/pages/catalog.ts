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
import { moneyFromCents } from '../../shared/present.ts';
import { presentProducts } from '../present.ts';
import type { ConsolePage } from './context.ts';

/**
 * Catalogue and stock: product search with stock per warehouse, one SKU's stock and its ledger
 * history (keyset paging), and a stock adjustment with a reason (stock:adjust; audited).
 */
export const catalogPage: ConsolePage = {
  nav: [{ href: `${CONSOLE_PREFIX}/products`, label: 'Catalogue & stock', permission: 'stock:adjust' }],
  routes: async (app, { store, now, page, forms, user, actor }) => {
    app.get('/products', { schema: { querystring: ProductSearchQuery } }, async (request, reply) => {
      const q = (request.query.q ?? '').trim();
      const results = await searchCatalog(store.db, q, request.query.after ?? null);
      return page(reply, 200, 'products', presentProducts(q, results, 'USD', can(user(request).role, 'catalog:write')));
    });

    // The search's products and their stock per warehouse as a CSV file (the page's `q`; every page).
    app.get('/products.csv', { schema: { querystring: ProductSearchQuery } }, async (request, reply) =>
      sendCsv(reply, stockCsv(store.db, (request.query.q ?? '').trim()), now()),
    );

    const productView = async (sku: string, beforeId: number | null, extra: Record<string, unknown>) => {
      const stock = await productStock(store.db, sku, beforeId);
      return {
        title: `Stock of ${sku}`,
        stock,
        price: moneyFromCents(stock.product.priceCents, 'USD'),
        adjusted: null,
        error: null,
        form: { warehouseCode: '', delta: '', reason: '' },
        canEdit: false,
        ...extra,
      };
    };

    app.get('/products/:sku', { schema: { params: ConsoleSkuParams, querystring: StockHistoryQuery } }, async (request, reply) => {
      const before = request.query.before === undefined ? null : Number(request.query.before);
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
        return page(reply, httpStatus(error), 'product', await productView(sku, null, { canAdjust: true, error: why, form: { warehouseCode, delta, reason } }));
      }
    });
  },
};
