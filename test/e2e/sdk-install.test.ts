import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, startProcess, tempDir } from './process.ts';

/** The text of `<code data-…>` on a page, as a person would copy it. */
function codeBlock(html: string, attribute: string): string {
  const found = new RegExp(`<code ${attribute}>([\\s\\S]*?)</code>`).exec(html);
  assert.ok(found, `no <code ${attribute}> on the page:\n${html}`);
  const entities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
  return found[1].replace(/&(amp|lt|gt|quot|#39);/g, (e) => entities[e]);
}

/**
 * Issue 29: a merchant with only the server's address installs the typed client from it and runs
 * its example. The real server (dist/ bundle, HTTPS on its self-signed certificate, demo data);
 * the Get started page's commands run as printed, in one shell, in an empty folder, with an npm
 * registry that does not answer (the package has no dependencies) and no user npm configuration.
 */
describe('the client package served at /sdk/', () => {
  it('installs with npm from the server into an empty folder and its example reads stock, as the Get started page prints', { timeout: 300_000 }, async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const origin = `https://127.0.0.1:${port}`;
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${path.join(dir, 'stockist.db')}`,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ADMIN_API_KEY: '',
      TLS: '',
      STOCKIST_ENV: '',
    };
    const { child, output } = await startProcess(['serve', '--seed', 'demo'], env, /Business manager \(merchants\)[^\n]*\n[^\n]*Demo merchant admin[^\n]*\n/);
    t.after(() => child.kill('SIGKILL'));
    const manager = /Demo merchant admin \(password shown once\): (\S+) {2}(\S+)$/m.exec(output());
    assert.ok(manager, output());

    // Sign in to the business manager and make a token on Get started, as the merchant would.
    const curl = (args: string) => execSync(`curl -k --silent --show-error --max-time 20 ${args}`, { encoding: 'utf8' });
    const signIn = curl(
      `-D - -o /dev/null -H "Origin: ${origin}" --data-urlencode "email=${manager[1]}" --data-urlencode "password=${manager[2]}" ${origin}/manager/sign-in`,
    );
    const cookie = /^set-cookie: (__Host-stockist_manager=[A-Za-z0-9]+);/im.exec(signIn)?.[1];
    assert.ok(cookie, signIn);
    const getStarted = curl(`-H "Cookie: ${cookie}" ${origin}/manager`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(getStarted)?.[1];
    assert.ok(csrf, getStarted);
    const formKey = /name="_formKey" value="([^"]+)"/.exec(getStarted)?.[1];
    assert.ok(formKey, getStarted);
    // The form answers 303 to Get started, which shows the token once: -L follows it (as a GET).
    const withToken = curl(
      `-L -H "Cookie: ${cookie}" -H "Origin: ${origin}" --data-urlencode "_csrf=${csrf}" --data-urlencode "_formKey=${formKey}" ${origin}/manager/get-started/token`,
    );

    const install = codeBlock(withToken, 'data-sdk-install');
    const runWithToken = codeBlock(withToken, 'data-sdk-run-token');
    const runWithClient = codeBlock(withToken, 'data-sdk-run');
    assert.equal(codeBlock(getStarted, 'data-sdk-install'), install, 'the install commands do not depend on the token');
    assert.match(install, new RegExp(`^npm install ${origin}/sdk/stockist-client-\\d+\\.\\d+\\.\\d+\\.tgz$`, 'm'));
    assert.match(install, /^export NODE_EXTRA_CA_CERTS=/m, 'a self-signed sandbox: npm and node are told to trust its certificate');
    assert.match(runWithToken, /STOCKIST_TOKEN=stk_test_/);
    // The curl of "Try it" works as printed too (with -k on this certificate).
    const tryIt = codeBlock(withToken, 'data-curl');
    assert.match(tryIt, /^curl -k /);
    assert.equal(JSON.parse(execSync(`${tryIt} --silent --show-error --max-time 20`, { encoding: 'utf8' })).code, 10000);

    // An OAuth client of another merchant, for the STOCKIST_CLIENT_ID / STOCKIST_CLIENT_SECRET path.
    const adminKey = fs.readFileSync(path.join(dir, 'admin-key'), 'utf8').trim();
    const made = JSON.parse(
      curl(`-H "Authorization: Bearer ${adminKey}" -H "Content-Type: application/json" -d '{"name":"SDK Shop"}' ${origin}/admin/v1/merchants`),
    );
    const { clientId, clientSecret } = made.data as { clientId: string; clientSecret: string };

    // The merchant's machine: an empty folder, no npm configuration of the user, a registry that refuses connections.
    const home = path.join(dir, 'merchant');
    fs.mkdirSync(home);
    const shellEnv: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env))
      if (value !== undefined && !/^(npm_|NODE_EXTRA_CA_CERTS$|NODE_TLS_REJECT_UNAUTHORIZED$|NODE_OPTIONS$|STOCKIST_)/i.test(key)) shellEnv[key] = value;
    Object.assign(shellEnv, {
      HOME: home,
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_cache: path.join(home, '.npm'),
      npm_config_update_notifier: 'false',
      npm_config_fetch_retries: '0',
    });
    const shell = (script: string, extra: Record<string, string> = {}) => {
      const r = spawnSync('bash', ['-e', '-c', script], { cwd: home, env: { ...shellEnv, ...extra }, encoding: 'utf8', timeout: 180_000 });
      return { status: r.status, out: `${r.stdout}${r.stderr}` };
    };

    const byToken = shell(`${install}\n${runWithToken}`);
    assert.equal(byToken.status, 0, byToken.out);
    assert.match(byToken.out, /^\d+ products in the catalogue; stock of the first [1-9]\d*:$/m);
    assert.match(byToken.out, /^ {2}\S+ \(.+\): [A-Z0-9]+ \d+/m, 'a SKU with a warehouse and its quantity');
    const installed = path.join(home, 'stockist-example/node_modules/@stockist/client');
    assert.ok(fs.existsSync(path.join(installed, 'index.js')));
    assert.ok(fs.existsSync(path.join(installed, 'types/clients/typescript/src/index.d.ts')));

    // The OAuth client's path: the same folder (the install is repeated as printed), credentials from the environment.
    const byClient = shell(`${install}\n${runWithClient}`, { STOCKIST_CLIENT_ID: clientId, STOCKIST_CLIENT_SECRET: clientSecret });
    assert.equal(byClient.status, 0, byClient.out);
    assert.match(byClient.out, /^\d+ products in the catalogue; stock of the first [1-9]\d*:$/m);

    // Without the certificate trusted, Node refuses the connection: the export is what makes it work.
    const untrusted = shell(`cd stockist-example\n${runWithToken}`);
    assert.equal(untrusted.status, 1, untrusted.out);
    assert.match(untrusted.out, /self-signed certificate/);
  });
});
