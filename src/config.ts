import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Cron } from 'croner';
import { isCurrencyCode } from './domain/money.ts';
import { ENVIRONMENTS, type StockistEnv } from './domain/vocabulary.ts';
import { DEFAULT_CLAIM_WINDOW_DAYS } from './domain/claims.ts';

export interface Config {
  port: number;
  host: string;
  /** When set, the operator API is served on its own listener and not on `port`. */
  adminPort: number | null;
  databaseUrl: string;
  /** Where generated files live: the admin key, the self-signed certificate, the demo token. */
  dataDir: string;
  env: StockistEnv;
  /** Null means "generate one and keep it in the data directory" (resolved by the CLI at start-up). */
  adminApiKey: string | null;
  tls: boolean;
  tlsCertFile: string | null;
  tlsKeyFile: string | null;
  /**
   * Who may tell us the client's address and scheme (`X-Forwarded-For`, `X-Forwarded-Proto`):
   * 0 = nobody; n = the n proxies nearest to us (hops); a list = the proxies at these addresses or
   * CIDR ranges. Passed to Fastify's `trustProxy`, which reads the headers from the right.
   */
  trustProxy: TrustProxy;
  redisUrl: string | null;
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /** Request-body bytes per second per merchant (SPEC §2.4 "bounded in cost"); the burst is the largest merchant body limit. 0: off. */
  rateLimitBodyBytesPerSecond: number;
  /** Lifetime of an access token issued by the OAuth token endpoint. */
  accessTokenTtlSeconds: number;
  /** Lifetime of each refresh token (a rotation issues a new one with a fresh lifetime). */
  refreshTokenTtlSeconds: number;
  /** Failed token-endpoint attempts a client may make from one address before 429 (one more per 30 s). */
  oauthFailureLimit: number;
  /** Successful token grants (client credentials or refresh) per client: a burst, refilled at a rate per minute. */
  oauthGrantBurst: number;
  oauthGrantsPerMinute: number;
  /** How long a valid token's lookup is reused (0 = never); bounds how late another instance sees a revocation. */
  tokenCacheSeconds: number;
  bodyLimitBytes: number;
  refundReview: 'auto' | 'manual';
  refundAutoDelayMs: number;
  refundSlaHours: number;
  /** SPEC §18: a claim may be opened up to this many days after its split order shipped. */
  claimWindowDays: number;
  /** SPEC §18: open claims older than this are overdue in the operator's queue. */
  claimSlaHours: number;
  /** How long a worker's claim on a refund holds; a crashed worker's refunds are retried after it lapses. */
  refundClaimMs: number;
  /** Worker attempts at deciding one refund before it is parked for the operator (manual review). */
  refundMaxAttempts: number;
  sandboxAutoShipSeconds: number | null;
  /**
   * SANDBOX_LOOPBACK_WEBHOOKS: whether webhooks may go to loopback addresses (a receiver on the
   * developer's machine). Default on in sandbox; off, and not allowed on, in production.
   */
  sandboxLoopbackWebhooks: boolean;
  defaultWarehouse: string;
  /** SPEC §15: the ledger's currency (ISO 4217), fixed for an account once money moved in it. */
  supplierCurrency: string;
  /** Who issues the statements (SUPPLIER_NAME, SUPPLIER_ADDRESS): printed at the head of the statement PDF. */
  supplier: { name: string; address: string | null };
  seed: 'demo' | 'none';
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** auto: readable lines when stdout is a terminal, JSON lines otherwise. */
  logFormat: 'auto' | 'json' | 'pretty';
  /** Abuse limits (docs/security.md): request head size, JSON nesting, connections, slow clients. */
  maxHeaderBytes: number;
  maxJsonDepth: number;
  /** 0: no limit. Connections beyond it are closed at once by Node. */
  maxConnections: number;
  /** Whole request (head and body) must arrive within this; slow-loris bodies are cut off. */
  requestTimeoutMs: number;
  /** An idle socket is closed after this. */
  connectionTimeoutMs: number;
  /** Overload shedding (503/50300 with Retry-After before any work): 0 turns a check off. */
  overloadMaxEventLoopDelayMs: number;
  overloadMaxHeapBytes: number;
  overloadSampleMs: number;
  overloadRetryAfterSeconds: number;
  /** Worker threads rendering statement PDFs at once (issue 41): the process's cap on PDF work. */
  statementThreads: number;
  /** Statements (PDF or CSV) one merchant may have in the making at once; one more answers 429. */
  statementsPerMerchant: number;
  /** PDF statements that may wait for a free thread; one more answers 503. */
  statementQueue: number;
  /** PostgreSQL: a request waits at most this long for a pool connection before it is a 503. */
  dbConnectTimeoutMs: number;
  dbPoolSize: number;
  /** stock.changed webhooks: at most one delivery (of ≤ 500 changes; more → several) per endpoint per this. */
  stockWebhookIntervalMs: number;
  /** Operator console: a session unused this long ends (minutes). */
  consoleSessionIdleMinutes: number;
  /** Operator console: a session ends this long after sign-in however busy it is (hours). */
  consoleSessionMaxHours: number;
  /** LOW_STOCK_THRESHOLD: the console dashboard lists stock rows at or below this quantity. */
  lowStockThreshold: number;
  /**
   * The public origin merchants reach this server at (`https://api.example.com`), for links made
   * outside a browser request (invitations from the operator API or the CLI); null: the request's own
   * origin, or on the CLI https://HOST:PORT.
   */
  publicBaseUrl: string | null;
  /** Business manager: a session unused this long ends (minutes). */
  managerSessionIdleMinutes: number;
  /** Business manager: a session ends this long after sign-in however busy it is (hours). */
  managerSessionMaxHours: number;
  /** Per-merchant usage counters: add this process's counts to the database this often; 0 = do not count. */
  usageFlushMs: number;
  /** BACKUP_SCHEDULE: when scheduled backups run in `serve` (cron, croner's syntax); null = off. */
  backupSchedule: string | null;
  /** BACKUP_DIR: where archives are written (and kept, without S3). */
  backupDir: string;
  /** BACKUP_KEEP: how many verified archives pruning keeps. */
  backupKeep: number;
  /** BACKUP_S3_URL and the AWS variables: the bucket archives are uploaded to; null = the directory only. */
  backupS3: BackupS3Config | null;
}

/** Where and how to reach the S3 (or S3-compatible) bucket of BACKUP_S3_URL. */
export interface BackupS3Config {
  bucket: string;
  /** Key prefix without leading or trailing slashes ('' = the bucket's root). */
  prefix: string;
  region: string;
  /** AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL: an S3-compatible server (path-style addressing); null = AWS. */
  endpoint: string | null;
  /** From AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN); null = the SDK's own chain (profile, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
}

export type TrustProxy = number | string[];

/** Whether any proxy is trusted (TRUST_PROXY set to a hop count above 0 or to addresses). */
export function trustsProxy(trustProxy: TrustProxy): boolean {
  return Array.isArray(trustProxy) ? trustProxy.length > 0 : trustProxy > 0;
}

/** See REFUND_MAX_ATTEMPTS (docs/operator-guide.md): five attempts, one per REFUND_CLAIM_MS (30 s). */
export const DEFAULT_REFUND_MAX_ATTEMPTS = 5;

/** Raised for a bad environment value; its message is the one line printed before exiting. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`${variable}: ${detail}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * The supplier's name or address as the statement prints it: at most `max` characters, a line
 * break as `\n` (typed in a shell) or a real one, no other control characters.
 */
function supplierText(env: Env, name: string, max: number): string | undefined {
  const value = present(env, name)?.replace(/\\n/g, '\n');
  if (value === undefined) return undefined;
  if ([...value].length > max) throw new ConfigError(name, `must be at most ${max} characters`);
  if (/(?!\n)\p{Cc}/u.test(value)) throw new ConfigError(name, 'may not hold control characters (a line break is written \\n)');
  return value;
}

function present(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  const value = raw.trim();
  return value === '' ? undefined : value;
}

/** An origin (scheme, host, optional port; no path): links are built on it. */
function baseUrl(env: Env, name: string): string | null {
  const raw = present(env, name);
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an origin such as https://api.example.com (got "${raw}")`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.hash || url.username)
    throw new ConfigError(name, `must be an origin such as https://api.example.com, without a path (got "${raw}")`);
  return url.origin;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = present(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max} (got "${value}")`);
  }
  return Number(value);
}

/** 0 (off), or at least 1 KiB a second: a smaller budget could not admit a body worth the name. */
function bytesPerSecond(env: Env, name: string, fallback: number): number {
  const value = integer(env, name, fallback, 0, 1_073_741_824);
  if (value !== 0 && value < 1024) throw new ConfigError(name, `must be 0 (off) or from 1024 to 1073741824 (got "${value}")`);
  return value;
}

function optionalInteger(env: Env, name: string, min: number, max: number): number | null {
  return present(env, name) === undefined ? null : integer(env, name, 0, min, max);
}

/** on/off (also true/false, yes/no, 1/0); `fallback` when unset. */
function flag(env: Env, name: string, fallback: boolean): boolean {
  const value = present(env, name);
  if (value === undefined) return fallback;
  const v = value.toLowerCase();
  if (['on', 'true', 'yes', '1'].includes(v)) return true;
  if (['off', 'false', 'no', '0'].includes(v)) return false;
  throw new ConfigError(name, `must be on or off (got "${value}")`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = present(env, name);
  if (value === undefined) return fallback;
  const match = allowed.find((a) => a === value.toLowerCase());
  if (!match) throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${value}")`);
  return match;
}

/** The names @fastify/proxy-addr knows for the loopback, link-local and unique-local ranges. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** An address, a CIDR range (`10.0.0.0/8`, `fd00::/8`) or one of PROXY_RANGE_NAMES. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry.toLowerCase())) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY (SPEC §2.4): off, a number of proxy hops, or a comma-separated list of proxy
 * addresses. `true`/`on` are refused rather than read as "trust every hop": that would take the
 * client's address from the first X-Forwarded-For entry, which the client writes itself.
 */
function trustProxy(env: Env): TrustProxy {
  const value = present(env, 'TRUST_PROXY');
  if (value === undefined) return 0;
  const v = value.toLowerCase();
  if (['0', 'false', 'off', 'no'].includes(v)) return 0;
  const usage = 'must be 0/off, the number of proxies in front of Stockist (1, 2, …) or a comma-separated list of proxy addresses or CIDR ranges';
  if (['true', 'on', 'yes'].includes(v)) {
    throw new ConfigError('TRUST_PROXY', `${usage}; "${value}" would trust every X-Forwarded-For entry, which the client chooses (one proxy: TRUST_PROXY=1)`);
  }
  if (/^\d+$/.test(v)) {
    if (Number(v) > 32) throw new ConfigError('TRUST_PROXY', `${usage}; at most 32 hops (got "${value}")`);
    return Number(v);
  }
  const entries = value.split(',').map((e) => (PROXY_RANGE_NAMES.includes(e.trim().toLowerCase()) ? e.trim().toLowerCase() : e.trim()));
  const bad = entries.find((e) => !isProxyAddress(e));
  if (bad !== undefined) throw new ConfigError('TRUST_PROXY', `${usage} (got "${bad}" in "${value}")`);
  return entries;
}

/** Unset, the SQLite file lives in the data directory with the key and certificate. */
function databaseUrl(env: Env, dataDir: string): string {
  const value = present(env, 'DATABASE_URL') ?? `sqlite:${path.join(dataDir, 'stockist.db')}`;
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(value)) {
    throw new ConfigError('DATABASE_URL', `must start with sqlite: or postgres:// (got "${value}")`);
  }
  return value;
}

/** Cron syntax as croner reads it (five fields, or six with seconds first); refused at start-up, not at the first tick. */
function cronSchedule(env: Env, name: string): string | null {
  const value = present(env, name);
  if (value === undefined) return null;
  try {
    new Cron(value, { paused: true, timezone: 'Etc/UTC' }).stop();
  } catch (error) {
    throw new ConfigError(name, `must be a cron expression such as "0 */6 * * *" (${(error as Error).message}; got "${value}")`);
  }
  return value;
}

/**
 * BACKUP_S3_URL (`s3://bucket/prefix`) with the usual AWS variables. Credentials may come from the
 * SDK's own chain instead (a profile, an instance role), so only a half-given pair is refused.
 */
function backupS3(env: Env): BackupS3Config | null {
  const value = present(env, 'BACKUP_S3_URL');
  if (value === undefined) return null;
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(value);
  if (!match)
    throw new ConfigError(
      'BACKUP_S3_URL',
      `must be s3://bucket/prefix with a bucket name of 3 to 63 lower-case letters, digits, dots and hyphens (got "${value}")`,
    );
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  const endpointName = present(env, 'AWS_ENDPOINT_URL_S3') !== undefined ? 'AWS_ENDPOINT_URL_S3' : 'AWS_ENDPOINT_URL';
  const endpoint = present(env, endpointName) ?? null;
  if (endpoint !== null && !/^https?:\/\/[^/\s]+/.test(endpoint)) throw new ConfigError(endpointName, `must be an http:// or https:// URL (got "${endpoint}")`);
  const accessKeyId = present(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = present(env, 'AWS_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError(
      accessKeyId === undefined ? 'AWS_ACCESS_KEY_ID' : 'AWS_SECRET_ACCESS_KEY',
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together',
    );
  }
  const sessionToken = present(env, 'AWS_SESSION_TOKEN');
  return {
    bucket: match[1],
    prefix,
    region: present(env, 'AWS_REGION') ?? present(env, 'AWS_DEFAULT_REGION') ?? 'us-east-1',
    endpoint,
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } : null,
  };
}

/** Reads and validates the environment once; every later consumer gets the typed result. */
export function loadConfig(env: Env = process.env): Config {
  const tls = oneOf(env, 'TLS', ['on', 'off'] as const, 'on') === 'on';
  const tlsCertFile = present(env, 'TLS_CERT_FILE') ?? null;
  const tlsKeyFile = present(env, 'TLS_KEY_FILE') ?? null;
  if ((tlsCertFile === null) !== (tlsKeyFile === null)) {
    throw new ConfigError(tlsCertFile ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE', 'TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  const adminApiKey = present(env, 'ADMIN_API_KEY') ?? null;
  if (adminApiKey !== null && adminApiKey.length < 16) {
    throw new ConfigError('ADMIN_API_KEY', 'must be at least 16 characters');
  }
  const defaultWarehouse = present(env, 'DEFAULT_WAREHOUSE') ?? 'G007';
  if (defaultWarehouse.length > 32) throw new ConfigError('DEFAULT_WAREHOUSE', 'must be at most 32 characters');
  const supplierCurrency = present(env, 'SUPPLIER_CURRENCY') ?? 'USD';
  if (!isCurrencyCode(supplierCurrency))
    throw new ConfigError('SUPPLIER_CURRENCY', `must be an ISO 4217 code of three capital letters (got "${supplierCurrency}")`);
  const supplier = { name: supplierText(env, 'SUPPLIER_NAME', 200) ?? 'Stockist Supplier', address: supplierText(env, 'SUPPLIER_ADDRESS', 500) ?? null };
  const redisUrl = present(env, 'REDIS_URL') ?? null;
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL', `must start with redis:// or rediss:// (got "${redisUrl}")`);
  }
  const dataDir = path.resolve(present(env, 'DATA_DIR') ?? './data');
  const stockistEnv = oneOf(env, 'STOCKIST_ENV', ENVIRONMENTS, 'sandbox');
  const config: Config = {
    port: integer(env, 'PORT', 8443, 0, 65535),
    host: present(env, 'HOST') ?? '127.0.0.1',
    adminPort: optionalInteger(env, 'ADMIN_PORT', 0, 65535),
    databaseUrl: databaseUrl(env, dataDir),
    dataDir,
    env: stockistEnv,
    adminApiKey,
    tls,
    tlsCertFile,
    tlsKeyFile,
    trustProxy: trustProxy(env),
    redisUrl,
    rateLimitPerSecond: integer(env, 'RATE_LIMIT_PER_SECOND', 20, 1, 1_000_000),
    rateLimitBurst: integer(env, 'RATE_LIMIT_BURST', 40, 1, 1_000_000),
    rateLimitBodyBytesPerSecond: bytesPerSecond(env, 'RATE_LIMIT_BODY_BYTES_PER_SECOND', 32_768),
    accessTokenTtlSeconds: integer(env, 'ACCESS_TOKEN_TTL_SECONDS', 7200, 60, 2_592_000),
    refreshTokenTtlSeconds: integer(env, 'REFRESH_TOKEN_TTL_SECONDS', 2_592_000, 60, 31_536_000),
    oauthFailureLimit: integer(env, 'OAUTH_FAILURE_LIMIT', 10, 1, 10_000),
    oauthGrantBurst: integer(env, 'OAUTH_GRANT_BURST', 20, 1, 1_000_000),
    oauthGrantsPerMinute: integer(env, 'OAUTH_GRANTS_PER_MINUTE', 6, 1, 1_000_000),
    tokenCacheSeconds: integer(env, 'TOKEN_CACHE_SECONDS', 5, 0, 30),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1_048_576, 1024, 1_073_741_824),
    refundReview: oneOf(env, 'REFUND_REVIEW', ['auto', 'manual'] as const, 'auto'),
    refundAutoDelayMs: integer(env, 'REFUND_AUTO_DELAY_MS', 2000, 0, 86_400_000),
    refundSlaHours: integer(env, 'REFUND_SLA_HOURS', 24, 1, 8760),
    claimWindowDays: integer(env, 'CLAIM_WINDOW_DAYS', DEFAULT_CLAIM_WINDOW_DAYS, 1, 3650),
    claimSlaHours: integer(env, 'CLAIM_SLA_HOURS', 48, 1, 8760),
    refundClaimMs: integer(env, 'REFUND_CLAIM_MS', 30_000, 100, 3_600_000),
    refundMaxAttempts: integer(env, 'REFUND_MAX_ATTEMPTS', DEFAULT_REFUND_MAX_ATTEMPTS, 1, 1000),
    sandboxAutoShipSeconds: optionalInteger(env, 'SANDBOX_AUTO_SHIP_SECONDS', 1, 86_400),
    sandboxLoopbackWebhooks: flag(env, 'SANDBOX_LOOPBACK_WEBHOOKS', stockistEnv === 'sandbox'),
    defaultWarehouse,
    supplierCurrency,
    supplier,
    seed: oneOf(env, 'SEED', ['demo', 'none'] as const, 'none'),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['auto', 'json', 'pretty'] as const, 'auto'),
    maxHeaderBytes: integer(env, 'MAX_HEADER_BYTES', 16_384, 1024, 1_048_576),
    maxJsonDepth: integer(env, 'MAX_JSON_DEPTH', 32, 2, 1000),
    maxConnections: integer(env, 'MAX_CONNECTIONS', 2048, 0, 1_000_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    connectionTimeoutMs: integer(env, 'CONNECTION_TIMEOUT_MS', 60_000, 100, 3_600_000),
    overloadMaxEventLoopDelayMs: integer(env, 'OVERLOAD_MAX_EVENT_LOOP_DELAY_MS', 1000, 0, 600_000),
    overloadMaxHeapBytes: integer(env, 'OVERLOAD_MAX_HEAP_BYTES', 0, 0, 1_099_511_627_776),
    overloadSampleMs: integer(env, 'OVERLOAD_SAMPLE_MS', 1000, 10, 60_000),
    overloadRetryAfterSeconds: integer(env, 'OVERLOAD_RETRY_AFTER_SECONDS', 5, 1, 3600),
    // One per core: the threads run below the event loop's priority (niceIncrement), so the API
    // keeps its share; measured with 2 on 2 cores (docs/performance.md, issue 41).
    statementThreads: integer(env, 'STATEMENT_THREADS', Math.max(1, availableParallelism()), 1, 64),
    statementsPerMerchant: integer(env, 'STATEMENTS_PER_MERCHANT', 1, 1, 100),
    statementQueue: integer(env, 'STATEMENT_QUEUE', 8, 0, 10_000),
    dbConnectTimeoutMs: integer(env, 'DB_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
    dbPoolSize: integer(env, 'DB_POOL_SIZE', 10, 1, 1000),
    stockWebhookIntervalMs: integer(env, 'STOCK_WEBHOOK_INTERVAL_MS', 5000, 0, 3_600_000),
    consoleSessionIdleMinutes: integer(env, 'CONSOLE_SESSION_IDLE_MINUTES', 30, 1, 1440),
    consoleSessionMaxHours: integer(env, 'CONSOLE_SESSION_MAX_HOURS', 12, 1, 720),
    lowStockThreshold: integer(env, 'LOW_STOCK_THRESHOLD', 5, 0, 1_000_000),
    publicBaseUrl: baseUrl(env, 'PUBLIC_BASE_URL'),
    managerSessionIdleMinutes: integer(env, 'MANAGER_SESSION_IDLE_MINUTES', 30, 1, 1440),
    managerSessionMaxHours: integer(env, 'MANAGER_SESSION_MAX_HOURS', 12, 1, 720),
    usageFlushMs: integer(env, 'USAGE_FLUSH_MS', 5000, 0, 600_000),
    backupSchedule: cronSchedule(env, 'BACKUP_SCHEDULE'),
    backupDir: path.resolve(present(env, 'BACKUP_DIR') ?? path.join(dataDir, 'backups')),
    backupKeep: integer(env, 'BACKUP_KEEP', 14, 1, 10_000),
    backupS3: backupS3(env),
  };
  if (config.env === 'production' && !config.tls && !trustsProxy(config.trustProxy)) {
    throw new ConfigError(
      'TRUST_PROXY',
      'must be set in production when TLS=off (Stockist must sit behind a TLS-terminating proxy): the number of proxy hops (1) or their addresses',
    );
  }
  if (config.env === 'production' && config.sandboxAutoShipSeconds !== null) {
    throw new ConfigError('SANDBOX_AUTO_SHIP_SECONDS', 'simulates shipping and is only allowed when STOCKIST_ENV=sandbox');
  }
  if (config.env === 'production' && config.sandboxLoopbackWebhooks) {
    throw new ConfigError('SANDBOX_LOOPBACK_WEBHOOKS', 'delivers webhooks to loopback addresses and is only allowed when STOCKIST_ENV=sandbox');
  }
  if (config.consoleSessionIdleMinutes > config.consoleSessionMaxHours * 60) {
    throw new ConfigError('CONSOLE_SESSION_IDLE_MINUTES', `must be at most CONSOLE_SESSION_MAX_HOURS × 60 (${config.consoleSessionMaxHours * 60})`);
  }
  if (config.managerSessionIdleMinutes > config.managerSessionMaxHours * 60) {
    throw new ConfigError('MANAGER_SESSION_IDLE_MINUTES', `must be at most MANAGER_SESSION_MAX_HOURS × 60 (${config.managerSessionMaxHours * 60})`);
  }
  if (config.rateLimitBurst < config.rateLimitPerSecond) {
    throw new ConfigError('RATE_LIMIT_BURST', `must be at least RATE_LIMIT_PER_SECOND (${config.rateLimitPerSecond})`);
  }
  return config;
}
