import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8443);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.adminPort, null);
    assert.equal(c.dataDir, path.resolve('data'));
    assert.equal(
      c.databaseUrl,
      `sqlite:${path.resolve('data', 'stockist.db')}`,
      'the SQLite file sits in the data directory, resolved against the current directory',
    );
    assert.equal(c.logFormat, 'auto');
    assert.equal(c.env, 'sandbox');
    assert.equal(c.tls, true);
    assert.equal(c.rateLimitPerSecond, 20);
    assert.equal(c.rateLimitBurst, 40);
    assert.equal(c.accessTokenTtlSeconds, 7200);
    assert.equal(c.refreshTokenTtlSeconds, 2_592_000);
    assert.equal(c.oauthFailureLimit, 10);
    assert.equal(c.oauthGrantBurst, 20);
    assert.equal(c.oauthGrantsPerMinute, 6);
    assert.equal(c.bodyLimitBytes, 1_048_576);
    assert.equal(c.rateLimitBodyBytesPerSecond, 32_768);
    assert.equal(c.refundReview, 'auto');
    assert.equal(c.refundAutoDelayMs, 2000);
    assert.equal(c.refundSlaHours, 24);
    assert.equal(c.sandboxAutoShipSeconds, null);
    assert.equal(c.defaultWarehouse, 'G007');
    assert.equal(c.seed, 'none');
    assert.equal(c.stockWebhookIntervalMs, 5000);
  });

  it('reads SANDBOX_LOOPBACK_WEBHOOKS: on by default in sandbox, off in production, off when set off (Hardening III)', () => {
    assert.equal(loadConfig({}).sandboxLoopbackWebhooks, true);
    assert.equal(loadConfig({ STOCKIST_ENV: 'production', TLS: 'on' }).sandboxLoopbackWebhooks, false);
    for (const off of ['off', 'false', 'FALSE', 'no', '0']) assert.equal(loadConfig({ SANDBOX_LOOPBACK_WEBHOOKS: off }).sandboxLoopbackWebhooks, false, off);
    for (const on of ['on', 'true', 'yes', '1']) assert.equal(loadConfig({ SANDBOX_LOOPBACK_WEBHOOKS: on }).sandboxLoopbackWebhooks, true, on);
    assert.equal(loadConfig({ STOCKIST_ENV: 'production', SANDBOX_LOOPBACK_WEBHOOKS: 'off' }).sandboxLoopbackWebhooks, false);
  });

  it('reads USAGE_FLUSH_MS (default 5 s; 0 = counters off)', () => {
    assert.equal(loadConfig({}).usageFlushMs, 5000);
    assert.equal(loadConfig({ USAGE_FLUSH_MS: '0' }).usageFlushMs, 0);
    assert.equal(loadConfig({ USAGE_FLUSH_MS: '600000' }).usageFlushMs, 600_000);
  });

  it('reads STOCK_WEBHOOK_INTERVAL_MS (0 = every worker round, for tests)', () => {
    assert.equal(loadConfig({ STOCK_WEBHOOK_INTERVAL_MS: '0' }).stockWebhookIntervalMs, 0);
    assert.equal(loadConfig({ STOCK_WEBHOOK_INTERVAL_MS: '60000' }).stockWebhookIntervalMs, 60_000);
  });

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      ADMIN_PORT: '9001',
      DATABASE_URL: 'postgres://u@h/db',
      STOCKIST_ENV: 'production',
      ADMIN_API_KEY: 'a-very-long-admin-key',
      TLS: 'off',
      TRUST_PROXY: '1',
      REDIS_URL: 'redis://127.0.0.1:6379',
      RATE_LIMIT_PER_SECOND: '5',
      RATE_LIMIT_BURST: '10',
      BODY_LIMIT_BYTES: '2048',
      REFUND_REVIEW: 'manual',
      REFUND_AUTO_DELAY_MS: '0',
      REFUND_SLA_HOURS: '2',
      DEFAULT_WAREHOUSE: 'US01',
      SEED: 'demo',
      LOG_LEVEL: 'warn',
      ACCESS_TOKEN_TTL_SECONDS: '600',
      REFRESH_TOKEN_TTL_SECONDS: '86400',
      OAUTH_FAILURE_LIMIT: '3',
      OAUTH_GRANT_BURST: '5',
      OAUTH_GRANTS_PER_MINUTE: '2',
      RATE_LIMIT_BODY_BYTES_PER_SECOND: '131072',
    });
    assert.equal(c.rateLimitBodyBytesPerSecond, 131_072);
    assert.equal(loadConfig({ RATE_LIMIT_BODY_BYTES_PER_SECOND: '0' }).rateLimitBodyBytesPerSecond, 0, '0 turns the body budget off');
    assert.deepEqual(
      [c.accessTokenTtlSeconds, c.refreshTokenTtlSeconds, c.oauthFailureLimit, c.oauthGrantBurst, c.oauthGrantsPerMinute],
      [600, 86400, 3, 5, 2],
    );
    // The bounds of TOKEN_CACHE_SECONDS (README: 0–30) are themselves accepted.
    assert.equal(loadConfig({ TOKEN_CACHE_SECONDS: '30' }).tokenCacheSeconds, 30);
    assert.equal(loadConfig({ TOKEN_CACHE_SECONDS: '0' }).tokenCacheSeconds, 0);
    assert.equal(loadConfig({}).tokenCacheSeconds, 5);
    assert.deepEqual(
      [c.port, c.host, c.adminPort, c.env, c.tls, c.trustProxy, c.rateLimitPerSecond, c.bodyLimitBytes, c.refundReview, c.defaultWarehouse, c.seed, c.logLevel],
      [9000, '0.0.0.0', 9001, 'production', false, 1, 5, 2048, 'manual', 'US01', 'demo', 'warn'],
    );
  });

  it('puts the default SQLite file in DATA_DIR, both resolved against the current directory', () => {
    assert.equal(loadConfig({ DATA_DIR: 'elsewhere' }).databaseUrl, `sqlite:${path.resolve('elsewhere', 'stockist.db')}`);
    assert.equal(loadConfig({ DATA_DIR: '/srv/stockist', DATABASE_URL: 'sqlite:./x.db' }).databaseUrl, 'sqlite:./x.db');
    assert.equal(loadConfig({ LOG_FORMAT: 'JSON' }).logFormat, 'json');
  });

  const bad: [Record<string, string>, string][] = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ ADMIN_PORT: '-1' }, 'ADMIN_PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ STOCKIST_ENV: 'staging' }, 'STOCKIST_ENV'],
    [{ TLS: 'maybe' }, 'TLS'],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT'],
    [{ TRUST_PROXY: 'perhaps' }, 'TRUST_PROXY'],
    // "Trust every hop" would read the client's address from the entry the client writes itself.
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'on' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '-1' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1,' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1, proxy.internal' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/8/8' }, 'TRUST_PROXY'],
    [{ STOCKIST_ENV: 'production', TLS: 'off', TRUST_PROXY: '0' }, 'TRUST_PROXY'],
    [{ ADMIN_API_KEY: 'short' }, 'ADMIN_API_KEY'],
    [{ RATE_LIMIT_PER_SECOND: '0' }, 'RATE_LIMIT_PER_SECOND'],
    [{ RATE_LIMIT_PER_SECOND: '50' }, 'RATE_LIMIT_BURST'],
    [{ BODY_LIMIT_BYTES: '1.5' }, 'BODY_LIMIT_BYTES'],
    [{ RATE_LIMIT_BODY_BYTES_PER_SECOND: '1000' }, 'RATE_LIMIT_BODY_BYTES_PER_SECOND'],
    [{ RATE_LIMIT_BODY_BYTES_PER_SECOND: 'lots' }, 'RATE_LIMIT_BODY_BYTES_PER_SECOND'],
    [{ REFUND_REVIEW: 'sometimes' }, 'REFUND_REVIEW'],
    [{ REFUND_AUTO_DELAY_MS: 'soon' }, 'REFUND_AUTO_DELAY_MS'],
    [{ REFUND_SLA_HOURS: '0' }, 'REFUND_SLA_HOURS'],
    [{ SANDBOX_AUTO_SHIP_SECONDS: 'x' }, 'SANDBOX_AUTO_SHIP_SECONDS'],
    [{ SEED: 'everything' }, 'SEED'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ ACCESS_TOKEN_TTL_SECONDS: '10' }, 'ACCESS_TOKEN_TTL_SECONDS'],
    [{ REFRESH_TOKEN_TTL_SECONDS: 'forever' }, 'REFRESH_TOKEN_TTL_SECONDS'],
    [{ OAUTH_FAILURE_LIMIT: '0' }, 'OAUTH_FAILURE_LIMIT'],
    [{ OAUTH_GRANT_BURST: '0' }, 'OAUTH_GRANT_BURST'],
    [{ OAUTH_GRANTS_PER_MINUTE: '0' }, 'OAUTH_GRANTS_PER_MINUTE'],
    [{ OAUTH_GRANTS_PER_MINUTE: 'many' }, 'OAUTH_GRANTS_PER_MINUTE'],
    [{ STOCK_WEBHOOK_INTERVAL_MS: 'soon' }, 'STOCK_WEBHOOK_INTERVAL_MS'],
    [{ STOCK_WEBHOOK_INTERVAL_MS: '3600001' }, 'STOCK_WEBHOOK_INTERVAL_MS'],
    [{ STOCK_WEBHOOK_INTERVAL_MS: '-1' }, 'STOCK_WEBHOOK_INTERVAL_MS'],
    [{ TOKEN_CACHE_SECONDS: '31' }, 'TOKEN_CACHE_SECONDS'],
    [{ TOKEN_CACHE_SECONDS: '-1' }, 'TOKEN_CACHE_SECONDS'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ TLS_CERT_FILE: '/tmp/c.pem' }, 'TLS_KEY_FILE'],
    [{ STOCKIST_ENV: 'production', TLS: 'off' }, 'TRUST_PROXY'],
    [{ STOCKIST_ENV: 'production', SANDBOX_AUTO_SHIP_SECONDS: '30' }, 'SANDBOX_AUTO_SHIP_SECONDS'],
    [{ STOCKIST_ENV: 'production', SANDBOX_LOOPBACK_WEBHOOKS: 'on' }, 'SANDBOX_LOOPBACK_WEBHOOKS'],
    [{ SANDBOX_LOOPBACK_WEBHOOKS: 'sometimes' }, 'SANDBOX_LOOPBACK_WEBHOOKS'],
    [{ CONSOLE_SESSION_IDLE_MINUTES: '0' }, 'CONSOLE_SESSION_IDLE_MINUTES'],
    [{ CONSOLE_SESSION_IDLE_MINUTES: '1441' }, 'CONSOLE_SESSION_IDLE_MINUTES'],
    [{ CONSOLE_SESSION_IDLE_MINUTES: 'half an hour' }, 'CONSOLE_SESSION_IDLE_MINUTES'],
    [{ CONSOLE_SESSION_MAX_HOURS: '0' }, 'CONSOLE_SESSION_MAX_HOURS'],
    [{ CONSOLE_SESSION_MAX_HOURS: '721' }, 'CONSOLE_SESSION_MAX_HOURS'],
    [{ CONSOLE_SESSION_MAX_HOURS: '1', CONSOLE_SESSION_IDLE_MINUTES: '61' }, 'CONSOLE_SESSION_IDLE_MINUTES'],
    [{ USAGE_FLUSH_MS: '-1' }, 'USAGE_FLUSH_MS'],
    [{ USAGE_FLUSH_MS: '600001' }, 'USAGE_FLUSH_MS'],
    [{ USAGE_FLUSH_MS: 'often' }, 'USAGE_FLUSH_MS'],
  ];
  for (const [env, variable] of bad) {
    it(`refuses ${JSON.stringify(env)} naming ${variable}`, () => {
      assert.throws(
        () => loadConfig(env),
        (e: unknown) => e instanceof ConfigError && e.variable === variable && e.message.startsWith(`${variable}:`) && !e.message.includes('\n'),
      );
    });
  }

  it('reads the console session limits (idle 30 min, absolute 12 h by default)', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.consoleSessionIdleMinutes, 30);
    assert.equal(defaults.consoleSessionMaxHours, 12);
    const set = loadConfig({ CONSOLE_SESSION_IDLE_MINUTES: '15', CONSOLE_SESSION_MAX_HOURS: '8' });
    assert.deepEqual([set.consoleSessionIdleMinutes, set.consoleSessionMaxHours], [15, 8]);
    assert.equal(
      loadConfig({ CONSOLE_SESSION_IDLE_MINUTES: '60', CONSOLE_SESSION_MAX_HOURS: '1' }).consoleSessionIdleMinutes,
      60,
      'idle may equal the absolute limit',
    );
  });

  it('reads TRUST_PROXY as off, a number of proxy hops, or a list of proxy addresses and CIDR ranges', () => {
    assert.equal(loadConfig({}).trustProxy, 0);
    for (const off of ['0', 'off', 'false', 'no', 'OFF']) assert.equal(loadConfig({ TRUST_PROXY: off }).trustProxy, 0, off);
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1, '1 keeps meaning one proxy in front');
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy, ['10.0.0.0/8']);
    assert.deepEqual(loadConfig({ TRUST_PROXY: ' 192.0.2.10, 10.0.0.0/8 ,fd00::/8,::1, Loopback' }).trustProxy, [
      '192.0.2.10',
      '10.0.0.0/8',
      'fd00::/8',
      '::1',
      'loopback',
    ]);
    // Production with TLS=off needs a proxy in front, named either way.
    assert.equal(loadConfig({ STOCKIST_ENV: 'production', TLS: 'off', TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ STOCKIST_ENV: 'production', TLS: 'off', TRUST_PROXY: '10.1.2.3' }).trustProxy, ['10.1.2.3']);
  });

  it('reads REFUND_MAX_ATTEMPTS (default 5, 1 to 1000)', () => {
    assert.equal(loadConfig({}).refundMaxAttempts, 5);
    assert.equal(loadConfig({ REFUND_MAX_ATTEMPTS: '12' }).refundMaxAttempts, 12);
    for (const bad of ['0', '1001', 'x'])
      assert.throws(
        () => loadConfig({ REFUND_MAX_ATTEMPTS: bad }),
        (e: unknown) => e instanceof ConfigError && /^REFUND_MAX_ATTEMPTS:/.test(e.message),
      );
  });
});
