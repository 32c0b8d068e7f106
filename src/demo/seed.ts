import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { systemActor } from '../domain/audit.ts';
import { AppError } from '../domain/errors.ts';
import { SCOPES } from '../domain/scopes.ts';
import { authenticate, createMerchant, issueToken } from '../services/merchants.service.ts';
import { importCatalog } from '../services/catalog.service.ts';
import { postByOperator } from '../services/ledger.service.ts';
import { ensureDemoManager } from '../services/merchant-invitations.service.ts';
import { ensureDemoOwner } from '../services/staff.service.ts';
import type { Store } from '../store/db.ts';
import { emailKey } from '../domain/staff.ts';
import { findUsersByEmail } from '../store/merchant-users.repository.ts';
import { forMerchant } from '../store/tenancy.ts';
import { anyMerchant, findMerchantByName } from '../store/merchants.repository.ts';
import { anyProduct } from '../store/products.repository.ts';
import { findStaffByEmail } from '../store/staff.repository.ts';
import { parseDocument } from '../schemas/validate.ts';
import { ImportBody } from '../schemas/admin.ts';
import { DEMO_MANAGER_EMAIL, DEMO_MERCHANT_NAME, DEMO_OWNER_EMAIL, demoCatalogue, demoSku } from './demo-data.ts';

/** True when nothing has been loaded yet (SEED=demo only fills an empty database). */
export async function isEmpty(store: Store): Promise<boolean> {
  const [p, m] = await Promise.all([anyProduct(store.db), anyMerchant(store.db)]);
  return !p && !m;
}

/** What the demo merchant has paid in before its first order: 500.00 in the supplier's currency. */
const DEMO_OPENING_BALANCE_CENTS = 50_000;

export interface DemoCredentials {
  merchantId: number;
  token: string;
  sampleSkus: string[];
}

/** Loads the demo catalogue (idempotent upserts) and makes sure the demo merchant exists. */
export async function seedDemo(store: Store, config: Config): Promise<DemoCredentials> {
  const now = Date.now();
  await importCatalog(store.db, systemActor('demo-seed'), parseDocument<ImportBody>(ImportBody, demoCatalogue()), now);
  const credentials = (await demoCredentials(store, config, true))!;
  // SPEC §15, issue 28 item 7: money on the demo account (idempotent on its reference, so a second seed adds nothing).
  await postByOperator(
    forMerchant(store.db, credentials.merchantId),
    store.dialect,
    config,
    systemActor('demo-seed'),
    { type: 'top_up', environment: config.env, amountCents: DEMO_OPENING_BALANCE_CENTS, text: 'demo opening balance' },
    now,
  );
  return credentials;
}

/**
 * The demo merchant's token, kept in the data directory so each `npm start` can print a working
 * curl line (tokens are stored hashed, so the file is the only place it can be read back). A
 * revoked or missing token is replaced. Returns null when there is no demo merchant.
 */
export async function demoCredentials(store: Store, config: Config, create = false): Promise<DemoCredentials | null> {
  const merchant = await findMerchantByName(store.db, DEMO_MERCHANT_NAME);
  if (!merchant && !create) return null;
  const now = Date.now();
  const merchantId = merchant?.id ?? (await createMerchant(store.db, systemActor('demo-seed'), DEMO_MERCHANT_NAME, now)).merchantId;
  const file = path.join(config.dataDir, `demo-token-${config.env}`);
  let token = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : null;
  if (token) {
    try {
      const principal = await authenticate(store.db, config.env, token, now);
      // A token from before a scope existed (account:read) is replaced, so every banner line works.
      if (principal.merchantId !== merchantId || !SCOPES.every((s) => principal.scopes.has(s))) token = null;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      token = null;
    }
  }
  if (!token) {
    token = (await issueToken(forMerchant(store.db, merchantId), systemActor('demo-seed'), config.env, {}, now)).accessToken;
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  }
  return { merchantId, token, sampleSkus: [demoSku(1), demoSku(2), demoSku(3)] };
}

/** A demo sign-in: the console's owner, or the demo merchant's business manager admin. */
export interface DemoOwner {
  email: string;
  /** Only when this start created the account: printed once, stored nowhere but as a hash. */
  password: string | null;
}

/**
 * The sandbox's console owner: created (with a generated password) when there is no staff account
 * at all; afterwards only named, with how to set a new password. Null when other staff exist.
 */
export async function demoOwner(store: Store): Promise<DemoOwner | null> {
  const created = await ensureDemoOwner(store.db, DEMO_OWNER_EMAIL, Date.now());
  if (created) return created;
  const existing = await findStaffByEmail(store.db, DEMO_OWNER_EMAIL);
  return existing ? { email: existing.email, password: null } : null;
}

/**
 * The demo merchant's business manager admin: created (with a generated password) when the demo
 * merchant has no business manager user; afterwards only named. Null when its users are others.
 */
export async function demoManager(store: Store, merchantId: number): Promise<DemoOwner | null> {
  const created = await ensureDemoManager(store.db, forMerchant(store.db, merchantId), DEMO_MANAGER_EMAIL, Date.now());
  if (created) return created;
  const existing = (await findUsersByEmail(store.db, emailKey(DEMO_MANAGER_EMAIL))).find((u) => u.merchant_id === merchantId);
  return existing ? { email: existing.email, password: null } : null;
}
