/**
 * `node --import tsx bench/console-page-ab.ts --a <checkout> --b <checkout> [--db sqlite|postgres] [--page /console/merchants/1] [--rounds N]`
 *
 * The console-pages leg of bench/run.ts measured the way bench/order-http-ab.ts measures orders:
 * each checkout's whole app answering one signed-in console page through `app.inject`, the two
 * interleaved in batches in one process, CPU time per page summed per checkout (bench/interleave.ts).
 * Each side generates its own data (2,000 SKUs, 1,000 orders) and signs in its own owner, so what
 * differs between the two is their own code: routes, services, store reads, presenters, templates.
 * `--page` takes `{order}` and `{merchant}` for the first generated order and merchant.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { interleave, sideStore, type Side } from './interleave.ts';

const { values: args } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    db: { type: 'string', default: 'sqlite' },
    page: { type: 'string', default: '/console/merchants/{merchant}' },
    rounds: { type: 'string', default: '30' },
    batch: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '100' },
  },
});
if (!args.a || !args.b) throw new Error('--a and --b are required');
const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const PASSWORD = 'bench console passphrase';
const HOST = 'localhost:80';

async function side(checkout: string) {
  const root = path.resolve(checkout);
  const load = (rel: string) => import(path.join(root, rel));
  const { loadConfig } = await load('src/config.ts');
  const { buildApp } = await load('src/app.ts');
  const { generate } = await load('bench/generate.ts');
  const { createStaff } = await load('src/services/staff.service.ts');
  const { ORDER_ID_START } = await load('src/store/migrations/0004_orders.ts');
  const { url, store, cleanup } = await sideStore(root, args.db!, PG_URL, 'pageab');
  const { merchantId } = await generate(store, { skus: 2_000, orders: 1_000, ledgerRows: 6_000, onProgress: () => {} });
  await createStaff(store.db, { kind: 'cli', id: 'bench', requestId: null }, { email: 'owner@bench.example', role: 'owner', password: PASSWORD }, Date.now());
  const config = loadConfig({ DATABASE_URL: url, TLS: 'off', STOCKIST_ENV: 'sandbox', RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000' });
  const app = await buildApp({ config, store, adminApiKey: 'bench-admin-key-0123456789abcdef' }, { logger: false });
  const signIn = await app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { host: HOST, origin: `http://${HOST}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ email: 'owner@bench.example', password: PASSWORD }).toString(),
  });
  const cookie = String(signIn.headers['set-cookie'] ?? '').split(';')[0];
  if (signIn.statusCode !== 303 || !cookie) throw new Error(`${root}: console sign-in answered ${signIn.statusCode}`);
  const page = args.page!.replace('{merchant}', String(merchantId)).replace('{order}', String(ORDER_ID_START + 1));
  const name = path.basename(root);
  const one = async () => {
    const r = await app.inject({ method: 'GET', url: page, headers: { host: HOST, cookie } });
    if (r.statusCode !== 200) throw new Error(`${name}: ${page} answered ${r.statusCode} ${r.body.slice(0, 200)}`);
  };
  return {
    name,
    one,
    close: async () => {
      await app.close();
      await store.close();
      await cleanup();
    },
  };
}

const sides: [Side, Side] = [await side(args.a), await side(args.b)];
process.stdout.write(
  await interleave(`${args.db} ${args.page} (app.inject)`, sides, { rounds: Number(args.rounds), batch: Number(args.batch), warmup: Number(args.warmup) }),
);
