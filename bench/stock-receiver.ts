import http from 'node:http';

/**
 * The webhook receiver of the stock.changed scenario, in its own process so that reading the
 * deliveries does not slow the load generator down: answers 200 to every POST and counts
 * deliveries, bytes and changes; `GET /stats` returns the counts.
 */
let deliveries = 0;
let bytes = 0;
let changes = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET') return void res.end(JSON.stringify({ deliveries, bytes, changes }));
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => (body += chunk));
  req.on('end', () => {
    deliveries++;
    bytes += body.length;
    // One `"sku":` per change; cheaper than parsing the body.
    changes += body.split('"sku":').length - 1;
    res.end('ok');
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`receiver listening ${(server.address() as { port: number }).port}\n`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
