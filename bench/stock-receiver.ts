import http from 'node:http';

/**
 * The webhook receiver of the stock.changed scenario, in its own process so that reading the
 * deliveries does not slow the load generator down: answers 200 to every POST and counts
 * deliveries, bytes and changes; `GET /stats` returns the counts.
 *
 * It shares the machine's cores with the server it measures, so it does as little as a receiver
 * can: the body stays in the Buffers it arrived in (no UTF-8 decoding, no string building) and
 * changes are counted by scanning the bytes for `"sku":` (one per change). One delivery in
 * SAMPLE_EVERY is parsed in full and checked, so a broken body still shows (`bad`). It used to
 * decode every body to a string, concatenate it and split it at each change (≈ 230 MB per leg) on
 * the cores the server needed: the bench measuring itself.
 */
const SAMPLE_EVERY = 100;
const SKU = Buffer.from('"sku":');

let deliveries = 0;
let bytes = 0;
let changes = 0;
let sampled = 0;
let bad = 0;

function count(body: Buffer): number {
  let n = 0;
  for (let at = body.indexOf(SKU); at !== -1; at = body.indexOf(SKU, at + SKU.length)) n++;
  return n;
}

/** A sampled body must be a stock.changed whose change count matches the scan. */
function check(body: Buffer, scanned: number): boolean {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { type?: unknown; data?: { changes?: unknown[]; cursor?: unknown } };
    return (
      parsed.type === 'stock.changed' && Array.isArray(parsed.data?.changes) && parsed.data.changes.length === scanned && typeof parsed.data.cursor === 'string'
    );
  } catch {
    return false;
  }
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET') return void res.end(JSON.stringify({ deliveries, bytes, changes, sampled, bad }));
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    deliveries++;
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    bytes += body.length;
    const n = count(body);
    changes += n;
    if (deliveries % SAMPLE_EVERY === 1) {
      sampled++;
      if (!check(body, n)) bad++;
    }
    res.end('ok');
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`receiver listening ${(server.address() as { port: number }).port}\n`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
