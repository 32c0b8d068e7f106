import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { exited, freePort, startProcess, tempDir } from './process.ts';

/** The README's `npm start` path: HTTPS with a generated certificate, demo data, a curl line that works. */
describe('npm start (real process)', () => {
  // Two server starts: more than the default per-test timeout on a loaded machine.
  it('comes up on HTTPS with demo data and prints a working curl command', { timeout: 300_000 }, async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${path.join(dir, 'stockist.db')}`,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ADMIN_API_KEY: '',
      TLS: '',
      STOCKIST_ENV: '',
    };
    const { child, output } = await startProcess(['serve', '--seed', 'demo'], env, /curl -k .*\n/);
    t.after(() => child.kill('SIGKILL'));

    const text = output();
    assert.match(text, /Stockist listening on https:\/\/127\.0\.0\.1:\d+/);
    assert.match(text, /SHA-256 fingerprint ([0-9A-F]{2}:){31}[0-9A-F]{2}/);
    assert.match(text, /Admin API key \(generated, shown once/);
    assert.ok(fs.existsSync(path.join(dir, 'tls/cert.pem')), 'certificate written to the data directory');
    const adminKey = fs.readFileSync(path.join(dir, 'admin-key'), 'utf8').trim();
    assert.ok(text.includes(adminKey));

    const curl = /^\s*(curl -k .*)$/m.exec(text)![1];
    const body = JSON.parse(execSync(`${curl} --silent --show-error --max-time 10`, { encoding: 'utf8' }));
    assert.equal(body.code, 10000);
    assert.equal(body.data.list.length, 3);
    assert.ok(body.data.list.every((r: { warehouseStockList: unknown[] }) => r.warehouseStockList.length >= 1));
    // The second line reads the demo merchant's money account: the seed's opening top-up (SPEC §15).
    const accountCurl = /^\s*(curl -k .*\/openapi\/v1\/account")$/m.exec(text)![1];
    const account = JSON.parse(execSync(`${accountCurl} --silent --show-error --max-time 10`, { encoding: 'utf8' }));
    assert.equal(account.code, 10000);
    assert.equal(account.data.balance, 500);

    // The operator key printed works against the operator API.
    const admin = JSON.parse(
      execSync(`curl -k --silent -H "Authorization: Bearer ${adminKey}" https://127.0.0.1:${port}/admin/v1/warehouses`, { encoding: 'utf8' }),
    );
    assert.deepEqual(admin.data.list.map((w: { warehouseCode: string }) => w.warehouseCode).sort(), ['G006', 'G007', 'US01']);

    // The sandbox's console owner is printed once, and its password signs in (a Secure __Host- cookie over HTTPS).
    const owner = /Demo console owner \(password shown once\): (\S+) {2}(\S+)$/m.exec(text);
    assert.ok(owner, text);
    assert.match(text, new RegExp(`Operator console: https://127\\.0\\.0\\.1:${port}/console`));
    const signIn = execSync(
      `curl -k --silent -D - -o /dev/null -H "Origin: https://127.0.0.1:${port}" --data-urlencode "email=${owner[1]}" --data-urlencode "password=${owner[2]}" https://127.0.0.1:${port}/console/sign-in`,
      { encoding: 'utf8' },
    );
    assert.match(signIn, /^HTTP\/1\.1 303/);
    const cookie = /^set-cookie: (__Host-stockist_console=[A-Za-z0-9]+);.*HttpOnly; SameSite=Strict;.*Secure/im.exec(signIn);
    assert.ok(cookie, signIn);
    const dashboard = execSync(`curl -k --silent -H "Cookie: ${cookie[1]}" https://127.0.0.1:${port}/console`, { encoding: 'utf8' });
    assert.match(dashboard, /owner@stockist\.test \(owner\)/);

    // The demo merchant's business manager admin too: printed once, and it signs in to /manager.
    assert.match(text, new RegExp(`Business manager \\(merchants\\): https://127\\.0\\.0\\.1:${port}/manager`));
    const manager = /Demo merchant admin \(password shown once\): (\S+) {2}(\S+)$/m.exec(text);
    assert.ok(manager, text);
    assert.equal(manager[1], 'admin@demo-merchant.test');
    const managerSignIn = execSync(
      `curl -k --silent -D - -o /dev/null -H "Origin: https://127.0.0.1:${port}" --data-urlencode "email=${manager[1]}" --data-urlencode "password=${manager[2]}" https://127.0.0.1:${port}/manager/sign-in`,
      { encoding: 'utf8' },
    );
    assert.match(managerSignIn, /^HTTP\/1\.1 303/);
    assert.match(managerSignIn, /^location: \/manager\r?$/im);
    const managerCookie = /^set-cookie: (__Host-stockist_manager=[A-Za-z0-9]+);.*HttpOnly; SameSite=Strict;.*Secure/im.exec(managerSignIn);
    assert.ok(managerCookie, managerSignIn);
    const getStarted = execSync(`curl -k --silent -H "Cookie: ${managerCookie[1]}" https://127.0.0.1:${port}/manager`, { encoding: 'utf8' });
    assert.match(getStarted, /admin@demo-merchant\.test \(admin, Demo Merchant\)/);

    // HSTS-free plain HTTP is not served on the TLS port.
    assert.throws(() => execSync(`curl --silent --fail --max-time 5 http://127.0.0.1:${port}/healthz`, { stdio: 'pipe' }));

    child.kill('SIGTERM');
    assert.equal(await exited(child), 0, 'SIGTERM shuts down cleanly');

    // A second start reuses the database, the key and the certificate, and still prints a working token.
    const second = await startProcess(['serve', '--seed', 'demo'], env, /curl -k .*\n/);
    t.after(() => second.child.kill('SIGKILL'));
    assert.doesNotMatch(second.output(), /Loaded the demo data/);
    assert.match(second.output(), /Admin API key: in /);
    assert.doesNotMatch(second.output(), /password shown once/, 'the console password is printed only when it is created');
    assert.match(
      second.output(),
      /Demo console owner: owner@stockist\.test \(`npx stockist operator reset-password owner@stockist\.test` sets a new password\)/,
    );
    assert.match(
      second.output(),
      /Demo merchant admin: admin@demo-merchant\.test \(`npx stockist merchant invite \d+ <email> --role admin` prints a sign-up link for another\)/,
    );
    const curl2 = /^\s*(curl -k .*)$/m.exec(second.output())![1];
    assert.equal(JSON.parse(execSync(`${curl2} --silent`, { encoding: 'utf8' })).code, 10000);
    second.child.kill('SIGTERM');
    assert.equal(await exited(second.child), 0);
  });
});
