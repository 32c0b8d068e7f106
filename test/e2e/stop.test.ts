import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { exited, freePort, runCli, startProcess, tempDir } from './process.ts';

/** Issue 17 item 7: `kill <npm's pid>` does not reach the server; the pid file and `stockist stop` do. */
describe('pid file and stockist stop (real processes)', () => {
  it('writes DATA_DIR/stockist.pid while serving; stop sends SIGTERM, waits for the exit, and the file is gone', async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${path.join(dir, 'stop.db')}`,
      TLS: 'off',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'pretty',
      ADMIN_API_KEY: 'stop-admin-key-0123456789',
    };
    const server = await startProcess(['serve', '--port', String(await freePort())], env, /Stop: Ctrl-C/);
    t.after(() => server.child.kill('SIGKILL'));
    const pidFile = path.join(dir, 'stockist.pid');
    assert.equal(fs.readFileSync(pidFile, 'utf8').trim(), String(server.child.pid));
    assert.match(
      server.output(),
      new RegExp(`npx stockist stop\` with the same DATA_DIR \\(pid ${server.child.pid} in ${pidFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`),
    );
    // LOG_FORMAT=pretty: readable lines, not JSON (a terminal gets this by default).
    assert.match(server.output(), /INFO.*listening/);
    assert.doesNotMatch(server.output(), /^\{"level"/m);

    const stopped = runCli(['stop', '--timeout', '60'], { DATA_DIR: dir });
    assert.equal(stopped.status, 0, stopped.stderr);
    assert.equal(stopped.stderr, `stockist: data folder ${dir}\n`);
    assert.match(stopped.stdout, new RegExp(`^stopped Stockist pid ${server.child.pid} \\(stockist\\.pid\\) in [\\d.]+ s\\n$`));
    assert.equal(await exited(server.child), 0, 'a clean SIGTERM shutdown');
    assert.ok(!fs.existsSync(pidFile), 'the pid file is removed on a clean shutdown');

    // Nothing left to stop: says where it looked.
    const none = runCli(['stop'], { DATA_DIR: dir });
    assert.equal(none.status, 1);
    assert.match(none.stderr, new RegExp(`no server to stop: no pid file .* in ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; set DATA_DIR`));
  });

  it('an API and a worker process sharing DATA_DIR each have a pid file, removed on SIGTERM; JSON logs off a terminal', async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${path.join(dir, 'roles.db')}`,
      TLS: 'off',
      LOG_LEVEL: 'info',
      ADMIN_API_KEY: 'stop-admin-key-0123456789',
    };
    const api = await startProcess(['serve', '--role', 'api', '--port', String(await freePort())], env, /Stop: Ctrl-C/);
    t.after(() => api.child.kill('SIGKILL'));
    const worker = await startProcess(['serve', '--role', 'worker', '--port', String(await freePort())], env, /Stop: Ctrl-C/);
    t.after(() => worker.child.kill('SIGKILL'));
    assert.match(api.output(), /^\{"level":30,.*"msg":"listening"/m, 'not a terminal: JSON lines');
    assert.equal(fs.readFileSync(path.join(dir, 'stockist-api.pid'), 'utf8').trim(), String(api.child.pid));
    assert.equal(fs.readFileSync(path.join(dir, 'stockist-worker.pid'), 'utf8').trim(), String(worker.child.pid));
    // A clean shutdown by SIGTERM (as a service manager sends it) removes the process's own file.
    worker.child.kill('SIGTERM');
    assert.equal(await exited(worker.child), 0);
    assert.ok(!fs.existsSync(path.join(dir, 'stockist-worker.pid')), 'the worker removed its pid file');
    assert.ok(fs.existsSync(path.join(dir, 'stockist-api.pid')), "and left the API process's alone");
    const stopped = runCli(['stop'], { DATA_DIR: dir });
    assert.equal(stopped.status, 0, stopped.stderr);
    assert.equal(stopped.stdout.trim().split('\n').length, 1);
    assert.equal(await exited(api.child), 0);
    assert.deepEqual(
      fs.readdirSync(dir).filter((f) => f.endsWith('.pid')),
      [],
    );
  });

  it('clears a stale pid file, and never signals a process that is not a Stockist server', {
    skip: !fs.existsSync('/proc/self') && 'tells processes apart through /proc (Linux)',
  }, async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    // A pid that has exited (a server killed with -9 leaves its file behind).
    const gone = spawn(process.execPath, ['-e', '0']);
    await exited(gone);
    fs.writeFileSync(path.join(dir, 'stockist.pid'), `${gone.pid}\n`);
    const stale = runCli(['stop'], { DATA_DIR: dir });
    assert.equal(stale.status, 0, stale.stderr);
    assert.equal(stale.stdout, `stockist.pid: pid ${gone.pid} is not running; removed the stale pid file\n`);
    assert.ok(!fs.existsSync(path.join(dir, 'stockist.pid')));

    // A live process that is not Stockist (the pid was reused): refused, and it keeps running.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    t.after(() => other.kill('SIGKILL'));
    fs.writeFileSync(path.join(dir, 'stockist.pid'), `${other.pid}\n`);
    const refused = runCli(['stop'], { DATA_DIR: dir });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, new RegExp(`names pid ${other.pid}, which is not a Stockist server`));
    assert.equal(other.exitCode, null);
    assert.equal(other.signalCode, null, 'not signalled');
  });
});
