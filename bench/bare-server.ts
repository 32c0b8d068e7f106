import Fastify from 'fastify';

/**
 * The HTTP ceiling: bare Fastify routes with no auth, validation or database. GET answers the
 * body last put to `/_bench/answer` — the bench puts one real response of the scenario there, so
 * the ceiling writes as many bytes as the server must (a page of orders is ~7× a stock page) —
 * and a stock page as large as the real stock-by-30-SKUs response until then.
 */
const list = Array.from({ length: 30 }, (_, i) => ({
  sku: `BENCH-${String(i + 1).padStart(6, '0')}`,
  warehouseStockList: [
    { qty: 1000000, warehouseCode: 'G007', countryCode: 'CN' },
    { qty: 1000000, warehouseCode: 'G006', countryCode: 'CN' },
    { qty: 1000000, warehouseCode: 'US01', countryCode: 'US' },
  ],
}));
const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
let answer: unknown = { code: 10000, message: 'success', data: { total: 30, pageNumber: 1, pageSize: 30, list } };
app.put('/_bench/answer', async (request) => {
  answer = request.body;
  return null;
});
app.get('/*', async () => answer);
app.post('/openapi/v1/order/orders', async () => ({ code: 10000, message: 'success', data: '1000000000001' }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`bare listening ${(app.server.address() as { port: number }).port}\n`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
