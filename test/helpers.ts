import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, before, type TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp, type BuildOptions } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { openStore, type Dialect, type Store } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { contractHook, type ContractViolation } from './contract.ts';

export const ADMIN_KEY = 'test-admin-key-0123456789';
export const PG_URL = process.env.TEST_DATABASE_URL || null;

/** The dialects this run covers: SQLite always, PostgreSQL when TEST_DATABASE_URL is set. */
export const DIALECTS: Dialect[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];
export const PG_SKIP = PG_URL ? false : 'PostgreSQL suites skipped: TEST_DATABASE_URL is not set';

/** A fresh, migrated database of its own: a temp SQLite file, or a new PostgreSQL schema. */
export async function freshStore(dialect: Dialect): Promise<{ store: Store; url: string; schema?: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-test-'));
    const url = `sqlite:${path.join(dir, 'test.db')}`;
    const store = await openStore(url);
    await migrateToLatest(store);
    return { store, url, drop: async () => { await store.close(); fs.rmSync(dir, { recursive: true, force: true }); } };
  }
  if (!PG_URL) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const store = await openStore(PG_URL, { schema, poolSize: 20 });
  await migrateToLatest(store);
  return {
    store,
    url: PG_URL,
    schema,
    drop: async () => {
      await store.close();
      const pg = (await import('pg')).default;
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}

/**
 * Suites other than the rate-limit ones run with a budget they cannot exhaust (they hammer on
 * purpose), and without the token cache (they change tokens behind the app's back); the cache has
 * its own suite.
 */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({ TLS: 'off', LOG_LEVEL: 'silent', ADMIN_API_KEY: ADMIN_KEY, RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000', TOKEN_CACHE_SECONDS: '0', ...overrides });
}

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  config: Config;
  /** Operator call with the admin key. */
  admin(method: InjectOptions['method'], url: string, payload?: unknown): Promise<Res>;
  /** Merchant call with a bearer token. */
  merchant(token: string, method: InjectOptions['method'], url: string, payload?: unknown): Promise<Res>;
}

export interface Res {
  status: number;
  headers: Record<string, unknown>;
  body: any;
  raw: string;
}

async function call(app: FastifyInstance, opts: InjectOptions): Promise<Res> {
  const r = await app.inject(opts);
  let body: unknown = null;
  try {
    body = r.body === '' ? null : JSON.parse(r.body);
  } catch {
    body = r.body;
  }
  return { status: r.statusCode, headers: r.headers, body, raw: r.body };
}

/** Builds an app on its own database for one test file; closed and dropped when the suite ends. */
export async function buildTestApp(
  t: { after(fn: () => Promise<void>): void } | TestContext,
  dialect: Dialect,
  env: Record<string, string> = {},
  options: BuildOptions = {},
): Promise<TestApp> {
  const db = await freshStore(dialect);
  const config = testConfig(env);
  // Every response of a documented route is checked against docs/openapi.json (test/contract.ts).
  const violations: ContractViolation[] = [];
  const check = contractHook(violations);
  const onRoute: BuildOptions['onRoute'] = (route) => {
    options.onRoute?.(route);
    check(route);
  };
  const app = await buildApp({ config, store: db.store, adminApiKey: ADMIN_KEY }, { logger: options.logStream ? undefined : false, ...options, onRoute });
  t.after(async () => {
    await app.close();
    await db.drop();
    if (violations.length) {
      throw new Error(`${violations.length} response(s) broke the OpenAPI contract (docs/openapi.json):\n${violations.map((v) => `${v.request} → ${v.status}: ${v.problem}\n  ${v.body}`).join('\n')}`);
    }
  });
  return {
    app,
    store: db.store,
    config,
    admin: (method, url, payload) =>
      call(app, { method, url, payload: payload as InjectOptions['payload'], headers: { authorization: `Bearer ${ADMIN_KEY}` } }),
    merchant: (token, method, url, payload) =>
      call(app, { method, url, payload: payload as InjectOptions['payload'], headers: { authorization: `Bearer ${token}` } }),
  };
}

/** Creates a merchant and a token through the operator API. */
export async function newMerchant(t: TestApp, name = 'Acme', tokenBody: unknown = {}): Promise<{ merchantId: string; token: string; tokenId: string; clientId: string; clientSecret: string }> {
  const m = await t.admin('POST', '/admin/v1/merchants', { name });
  if (m.status !== 200) throw new Error(`merchant create failed: ${m.raw}`);
  const tok = await t.admin('POST', `/admin/v1/merchants/${m.body.data.merchantId}/tokens`, tokenBody);
  if (tok.status !== 200) throw new Error(`token issue failed: ${tok.raw}`);
  return { merchantId: m.body.data.merchantId, token: tok.body.data.accessToken, tokenId: tok.body.data.tokenId, clientId: m.body.data.clientId, clientSecret: m.body.data.clientSecret };
}

/** A small catalogue built through the operator import endpoint. */
export const SMALL_CATALOGUE = {
  warehouses: [
    { warehouseCode: 'G007', name: 'Shenzhen', countryCode: 'CN' },
    { warehouseCode: 'G006', name: 'Yiwu', countryCode: 'cn' },
    { warehouseCode: 'US01', name: 'Los Angeles', countryCode: 'US' },
  ],
  categories: [
    { categoryId: 10, name: 'Home', parentId: 0 },
    { categoryId: 11, name: 'Kitchen', parentId: 10 },
  ],
  products: [
    { sku: 'SKU-A', name: 'Mug', categoryId: 11, price: '9.32', weightGrams: 350 },
    { sku: 'SKU-B', name: 'Plate', categoryId: 11, price: 4.5, weightGrams: 500 },
    { sku: 'SKU-C', name: 'Bowl', categoryId: 11, price: 3, weightGrams: 300 },
  ],
  stocks: [
    { sku: 'SKU-A', warehouseCode: 'G007', qty: 10 },
    { sku: 'SKU-A', warehouseCode: 'US01', qty: 5 },
    { sku: 'SKU-B', warehouseCode: 'G006', qty: 7 },
  ],
  channels: [
    { channelCode: 'STD', name: 'Standard Shipping', channelType: 'Standard', warehouseCodes: ['G007', 'G006', 'US01'], countries: ['*'], baseFee: 2, perKgFee: '1.50', deliveryDaysMin: 6, deliveryDaysMax: 10 },
  ],
};

export async function loadCatalogue(t: TestApp, doc: unknown = SMALL_CATALOGUE) {
  const r = await t.admin('POST', '/admin/v1/import', doc);
  if (r.status !== 200) throw new Error(`import failed: ${r.raw}`);
  return r.body.data;
}

/** Row counts of every table, to assert that a refused request wrote nothing. */
export async function tableCounts(store: Store): Promise<Record<string, number>> {
  const tables = ['warehouses', 'categories', 'products', 'stocks', 'stock_ledger', 'channels', 'channel_warehouses', 'merchants', 'api_tokens', 'oauth_refresh_tokens', 'webhook_endpoints', 'webhook_events', 'webhook_deliveries'] as const;
  const out: Record<string, number> = {};
  for (const table of tables) {
    const row = await store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}

/**
 * Inside a `describe`: one app (and database) for the suite, built before its tests and dropped
 * after them. The returned object forwards to the app once it exists.
 */
export function useApp(dialect: Dialect, env: Record<string, string> = {}, options: BuildOptions = {}): TestApp {
  let current: TestApp | null = null;
  const cleanups: (() => Promise<void>)[] = [];
  before(async () => {
    current = await buildTestApp({ after: (fn: () => Promise<void>) => cleanups.push(fn) }, dialect, env, options);
  });
  after(async () => {
    for (const fn of cleanups) await fn();
  });
  const get = () => {
    if (!current) throw new Error('useApp: the app is built in the suite’s before hook');
    return current;
  };
  return {
    get app() { return get().app; },
    get store() { return get().store; },
    get config() { return get().config; },
    admin: (...args) => get().admin(...args),
    merchant: (...args) => get().merchant(...args),
  };
}
