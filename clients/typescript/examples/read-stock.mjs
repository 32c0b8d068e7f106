// Reads stock through the typed client: the catalogue's first products, each with its quantity per warehouse.
// Installed with the client (npm install <server>/sdk/stockist-client-<version>.tgz), run as
//
//   STOCKIST_URL=https://stockist.example node node_modules/@stockist/client/examples/read-stock.mjs
//
// Credentials from the environment, first found wins:
//   STOCKIST_CLIENT_ID + STOCKIST_CLIENT_SECRET   an OAuth client (business manager, API credentials)
//   STOCKIST_TOKEN                                a bearer token (business manager, Get started)
// A sandbox on a self-signed certificate: trust that certificate with NODE_EXTRA_CA_CERTS=<its .pem file>.
import { StockistClient, StockistError } from '@stockist/client';

const baseUrl = process.env.STOCKIST_URL;
const clientId = process.env.STOCKIST_CLIENT_ID || undefined;
const clientSecret = process.env.STOCKIST_CLIENT_SECRET || undefined;
const accessToken = process.env.STOCKIST_TOKEN || undefined;
if (!baseUrl) {
  console.error('read-stock: set STOCKIST_URL to the server address (https://…)');
  process.exit(2);
}
if (!(clientId && clientSecret) && !accessToken) {
  console.error('read-stock: set STOCKIST_CLIENT_ID and STOCKIST_CLIENT_SECRET (an OAuth client), or STOCKIST_TOKEN');
  process.exit(2);
}

const stockist = new StockistClient(clientId && clientSecret ? { baseUrl, clientId, clientSecret } : { baseUrl, accessToken });
try {
  // Stock is asked for by SKU (at most 30 at a time): the first page of the catalogue's.
  const products = await stockist.listProducts({ pageSize: 10 });
  console.log(`${products.total} products in the catalogue; stock of the first ${products.list.length}:`);
  if (products.list.length > 0) {
    const stock = await stockist.queryStocks({ skus: products.list.map((p) => p.sku).join(',') });
    for (const product of products.list) {
      const record = stock.list.find((r) => r.sku === product.sku);
      const warehouses = (record?.warehouseStockList ?? []).map((w) => `${w.warehouseCode} ${w.qty}`).join(', ');
      console.log(`  ${product.sku} (${product.name}): ${warehouses || 'no stock'}`);
    }
  }
} catch (error) {
  if (error instanceof StockistError) {
    console.error(`read-stock: ${error.status} ${error.code}: ${error.message} (request ${error.requestId})`);
    process.exit(1);
  }
  // fetch's own failures (refused connection, untrusted certificate) carry the reason in `cause`.
  console.error(`read-stock: ${error.message}${error.cause ? `: ${error.cause.message ?? error.cause}` : ''}`);
  process.exit(1);
}
