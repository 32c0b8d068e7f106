import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { FIRST_RETRY_MS, MAX_RETRY_DELAY_MS, nextAttemptAt, retryDelayMs } from '../../src/domain/webhook-schedule.ts';
import { newWebhookSecret, signedHeaders, verifyWebhook, WebhookVerificationError } from '../../src/domain/webhook-signature.ts';
import { addressKind, parseWebhookUrl, UnsafeWebhookUrl } from '../../src/domain/webhook-url.ts';

describe('verifyWebhook and signing, against the standardwebhooks library', () => {
  const secret = newWebhookSecret();
  const body = JSON.stringify({ type: 'refund.succeeded', timestamp: '2024-01-01T00:00:00Z', data: { orderId: '1', note: 'ünïcode ✓' } });
  const now = Date.now();
  const ts = Math.floor(now / 1000);

  it('verifies what the library signs', () => {
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(ts),
      'webhook-signature': new Webhook(secret).sign('msg_1', new Date(ts * 1000), body),
    };
    assert.deepEqual(verifyWebhook(headers, body, secret), JSON.parse(body));
    assert.deepEqual(verifyWebhook(new Headers(headers), Buffer.from(body), secret), JSON.parse(body), 'a Headers object and a Buffer body');
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    assert.deepEqual(verifyWebhook(upper, body, secret), JSON.parse(body), 'header names in any case');
  });

  it('signs what the library verifies, with one signature per live secret', () => {
    const old = newWebhookSecret();
    const headers = signedHeaders([secret, old], 'msg_2', ts, body);
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.deepEqual(new Webhook(old).verify(body, headers), JSON.parse(body));
    assert.deepEqual(verifyWebhook(headers, body, old), JSON.parse(body));
  });

  it('refuses tampering, another secret, stale or future timestamps and missing headers', () => {
    const headers = signedHeaders([secret], 'msg_3', ts, body);
    const refused = (h: Record<string, string>, b = body, s = secret, options = {}) =>
      assert.throws(() => verifyWebhook(h, b, s, options), WebhookVerificationError);
    refused(headers, body.replace('"1"', '"2"'));
    refused(headers, body, newWebhookSecret());
    refused({ ...headers, 'webhook-id': 'msg_4' });
    refused(headers, body, secret, { now: now + 301_000 });
    refused(headers, body, secret, { now: now - 301_000 });
    refused({ ...headers, 'webhook-signature': `v2,${headers['webhook-signature'].slice(3)}` });
    refused({ 'webhook-id': 'msg_3', 'webhook-timestamp': String(ts) });
    refused({ ...headers, 'webhook-timestamp': 'soon' });
    assert.throws(() => new Webhook(secret).verify(body.replace('"1"', '"2"'), headers));
  });
});

describe('retry schedule', () => {
  it('retries first within 10 s, then backs off exponentially with jitter up to 4 h', () => {
    assert.equal(
      retryDelayMs(1, () => 0),
      FIRST_RETRY_MS / 2,
    );
    assert.equal(
      retryDelayMs(1, () => 1),
      FIRST_RETRY_MS,
    );
    const nominal = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => retryDelayMs(n, () => 1));
    assert.deepEqual(nominal.slice(0, 4), [10_000, 30_000, 90_000, 270_000]);
    assert.ok(nominal.every((d, i) => i === 0 || d >= nominal[i - 1]));
    assert.equal(
      retryDelayMs(30, () => 1),
      MAX_RETRY_DELAY_MS,
    );
  });

  it('stops at the end of the window, with the last retry on its last moment', () => {
    assert.equal(
      nextAttemptAt(1, 1000, 1_000_000, () => 1),
      11_000,
    );
    assert.equal(
      nextAttemptAt(9, 900_000, 1_000_000, () => 1),
      1_000_000,
    );
    assert.equal(
      nextAttemptAt(9, 1_000_000, 1_000_000, () => 1),
      null,
    );
  });
});

describe('webhook URL rules', () => {
  it('classifies addresses', () => {
    const cases: [string, string][] = [
      ['93.184.216.34', 'public'],
      ['2606:4700::1111', 'public'],
      ['127.0.0.1', 'loopback'],
      ['127.8.9.10', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.0.1', 'private'],
      ['100.64.0.1', 'private'],
      ['fd00:ec2::254', 'private'],
      ['169.254.169.254', 'link-local'],
      ['::ffff:169.254.169.254', 'link-local'],
      ['fe80::1', 'link-local'],
      ['0.0.0.0', 'reserved'],
      ['::', 'reserved'],
      ['224.0.0.1', 'reserved'],
      ['255.255.255.255', 'reserved'],
      ['64:ff9b::a00:1', 'reserved'],
      ['not-an-ip', 'reserved'],
      // Hardening III: every IPv6 address that is not global unicast.
      ['2a00:1450:4001:81c::200e', 'public'],
      ['::7f00:1', 'reserved'], // IPv4-compatible ::127.0.0.1
      ['::127.0.0.1', 'reserved'],
      ['::a00:1', 'reserved'], // IPv4-compatible ::10.0.0.1
      ['::808:808', 'reserved'], // IPv4-compatible ::8.8.8.8: not global unicast either
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:8.8.8.8', 'reserved'], // IPv4-mapped: only for a v4 socket, never a v6 destination
      ['::ffff:0:7f00:1', 'reserved'], // SIIT (RFC 6145)
      ['fec0::1', 'private'], // site-local (deprecated)
      ['fec0:ffff::1', 'private'],
      ['2001::1', 'reserved'], // Teredo
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
      ['2002:7f00:1::1', 'reserved'], // 6to4 of 127.0.0.1
      ['2002:a00:1::1', 'reserved'], // 6to4 of 10.0.0.1
      ['2002:808:808::1', 'reserved'], // 6to4 of 8.8.8.8: transition forms are refused whatever they embed
      ['2001:db8::1', 'reserved'], // documentation
      ['3fff::1', 'reserved'], // documentation (RFC 9637)
      ['2001:2::1', 'reserved'], // benchmarking
      ['2001:10::1', 'reserved'], // ORCHID
      ['100::1', 'reserved'], // discard
      ['5f00::1', 'reserved'], // segment routing
      ['4000::1', 'reserved'], // outside 2000::/3
      ['ff02::1', 'reserved'],
      ['192.88.99.1', 'reserved'], // 6to4 relay anycast
      ['fe80::1%eth0', 'reserved'],
    ];
    for (const [address, kind] of cases) assert.equal(addressKind(address), kind, address);
  });

  it('checks the URL shape before any DNS', () => {
    assert.equal(parseWebhookUrl('https://example.com/hook?x=1', 'production').href, 'https://example.com/hook?x=1');
    assert.equal(parseWebhookUrl('http://example.com/hook', 'sandbox').protocol, 'http:');
    for (const [url, env] of [
      ['http://example.com/hook', 'production'],
      ['ftp://example.com/', 'sandbox'],
      ['https://u:p@example.com/', 'production'],
      ['https://example.com/#frag', 'production'],
      ['https://metadata.google.internal/computeMetadata/v1/', 'production'],
      ['//example.com', 'production'],
    ] as const) {
      assert.throws(() => parseWebhookUrl(url, env), UnsafeWebhookUrl, url);
    }
  });
});
