import Fastify from 'fastify';

/**
 * The HTTP ceiling: a bare Fastify route answering a stock page as large as the real
 * stock-by-30-SKUs response, with no auth, validation or database.
 */
const list = Array.from({ length: 30 }, (_, i) => ({
  sku: `BENCH-${String(i + 1).padStart(6, '0')}`,
  warehouseStockList: [
    { qty: 1000000, warehouseCode: 'G007', countryCode: 'CN' },
    { qty: 1000000, warehouseCode: 'G006', countryCode: 'CN' },
    { qty: 1000000, warehouseCode: 'US01', countryCode: 'US' },
  ],
}));
const app = Fastify({ logger: false });
app.get('/openapi/v1/product/stocks', async () => ({ code: 10000, message: 'success', data: { total: 30, pageNumber: 1, pageSize: 30, list } }));
app.post('/openapi/v1/order/orders', async () => ({ code: 10000, message: 'success', data: '1000000000001' }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`bare listening ${(app.server.address() as { port: number }).port}\n`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
