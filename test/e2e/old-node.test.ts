import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, ROOT, freePort, tempDir } from './process.ts';

/**
 * Issue 39 item 8 (SPEC §16): on a machine whose `node` is older than 22, the README's commands
 * either work (bin/stockist.js runs again on the Node.js 24 that scripts/use-node-24.sh fetched) or
 * stop at once with one line naming the fix — never a segmentation fault, never a stack trace. The
 * old Node is the machine's own (CI's machine has Node 20 as `node`; the tests run on the fetched 24).
 */
const OLD_NODE = findOldNode();
const SKIP = OLD_NODE ? false : 'no Node.js older than 22 on this machine (searched PATH, /usr/bin, /usr/local/bin): nothing to start on';
// The Node running these tests plays the fetched one when it sits in a bin/ folder, as
// scripts/use-node-24.sh's does (STOCKIST_NODE_DIR names that folder's parent).
const FETCHED_DIR = path.basename(path.dirname(process.execPath)) === 'bin' ? path.dirname(path.dirname(process.execPath)) : null;
const LINE =
  /^stockist: Node\.js \d+\.\d+\.\d+ is too old; Stockist needs 22 or later\. Run `\. scripts\/use-node-24\.sh` \(fetches Node\.js 24 from the npm registry\) or install Node\.js 24, then run this again\.\n$/;

function findOldNode(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin', '/usr/local/bin'];
  for (const dir of dirs) {
    if (!dir || path.resolve(dir) === path.dirname(process.execPath)) continue;
    const node = path.join(dir, 'node');
    try {
      fs.accessSync(node, fs.constants.X_OK);
    } catch {
      continue;
    }
    const r = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 20_000 });
    if (r.status === 0 && Number(r.stdout.split('.')[0]) < 22) return node;
  }
  return null;
}

/** The environment of a shell whose `node` (and npm) is the old one; `fetched`: where the fetched Node is. */
function oldShellEnv(fetched: { dir?: string; home?: string }, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of ['STOCKIST_NODE_DIR', 'STOCKIST_NODE_HOME', 'STOCKIST_NODE_VERSION', 'STOCKIST_RELAUNCHED_ON', 'NODE_TEST_CONTEXT', 'NODE_OPTIONS'])
    delete env[name];
  // npm's own notice of a newer npm is not ours to count.
  env.npm_config_update_notifier = 'false';
  if (fetched.dir) env.STOCKIST_NODE_DIR = fetched.dir;
  if (fetched.home) env.STOCKIST_NODE_HOME = fetched.home;
  const ours = path.dirname(process.execPath);
  env.PATH = [path.dirname(OLD_NODE!), ...(process.env.PATH ?? '').split(path.delimiter).filter((d) => d && path.resolve(d) !== ours)].join(path.delimiter);
  return env;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv) {
  const r = spawnSync(command, args, { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function noStackTrace(text: string) {
  assert.doesNotMatch(text, /^\s+at .+[(:]\d+/m, `no stack trace:\n${text}`);
  assert.doesNotMatch(text, /Segmentation fault|SIGSEGV/, text);
}

/** /proc/<pid>/stat's fifth field, after the command name in parentheses. */
function processGroup(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts the launcher on the old Node and waits for the server's banner (the server's pid in its pid file). */
async function startOnOldNode(
  t: TestContext,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  dataDir: string,
  options: { group?: boolean } = {},
): Promise<{ launcher: ChildProcess; serverPid: number; output: () => string; ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }> {
  // group: a process group of its own, as a shell starts a job, so the test can signal it as a terminal does.
  const launcher = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.group === true });
  let out = '';
  launcher.stdout!.on('data', (d) => (out += d));
  launcher.stderr!.on('data', (d) => (out += d));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    launcher.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const pidFile = path.join(dataDir, 'stockist.pid');
  let serverPid = 0;
  t.after(() => {
    // The server runs in a session of its own: a test that fails half-way must not leave it
    // behind (it would also hold this process's pipes open, and the file would never end).
    if (serverPid > 0 && isRunning(serverPid)) process.kill(serverPid, 'SIGKILL');
    if (launcher.exitCode === null && launcher.signalCode === null) launcher.kill('SIGKILL');
    launcher.stdout!.destroy();
    launcher.stderr!.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 120 s:\n${out}`)), 120_000);
    launcher.stdout!.on('data', () => {
      if (/Stop: Ctrl-C/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void ended.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`ended (${code ?? signal}) before its banner:\n${out}`));
    });
  });
  serverPid = Number(fs.readFileSync(pidFile, 'utf8'));
  return { launcher, serverPid, output: () => out, ended };
}

describe('on a Node.js older than 22', { skip: SKIP }, () => {
  it('without a fetched Node.js 24: the CLI, npm start, npm test, the install and build steps each stop with one line naming the fix', async (t) => {
    const empty = tempDir();
    t.after(() => fs.rmSync(empty, { recursive: true, force: true }));
    const env = oldShellEnv({ home: empty }, { DATA_DIR: path.join(empty, 'data'), TLS: 'off', PORT: String(await freePort()) });
    const npm = path.join(path.dirname(OLD_NODE!), 'npm');
    const cases: [string, string, string[]][] = [
      ['stockist --help', OLD_NODE!, [BIN, '--help']],
      ['stockist serve', OLD_NODE!, ['--max-semi-space-size=4', BIN, 'serve']],
      ['scripts/test.mjs', OLD_NODE!, ['scripts/test.mjs', 'test/unit/']],
      ['scripts/build.mjs (npm install: prepare)', OLD_NODE!, ['scripts/build.mjs']],
      ['scripts/check-node.mjs (npm install: preinstall)', OLD_NODE!, ['scripts/check-node.mjs']],
    ];
    // npm itself, where the old Node has its npm beside it: the script runs on the `node` on PATH.
    if (fs.existsSync(npm))
      cases.push(
        ['npm start', npm, ['start', '--silent']],
        ['npm test', npm, ['test', '--silent']],
        ['npm run preinstall', npm, ['run', 'preinstall', '--silent']],
      );
    for (const [name, command, args] of cases) {
      const r = run(command, args, env);
      assert.equal(r.signal, null, `${name}: not ended by a signal`);
      assert.equal(r.status, 1, `${name}: exit 1\n${r.stderr}`);
      noStackTrace(r.stderr);
      assert.match(r.stderr, LINE, `${name}: exactly the one line`);
      assert.equal(r.stdout, '', `${name}: nothing else`);
    }
    assert.ok(!fs.existsSync(path.join(empty, 'data')), 'nothing was started: no data folder');
  });

  it('with the fetched Node.js 24: --help works and serve runs on it; SIGTERM, `stockist stop` and a Ctrl-C each stop it cleanly', {
    skip: !FETCHED_DIR && `the Node running the tests (${process.execPath}) is not in a bin/ folder like scripts/use-node-24.sh's`,
  }, async (t) => {
    const env = oldShellEnv({ dir: FETCHED_DIR! }, { TLS: 'off', LOG_LEVEL: 'info', ADMIN_API_KEY: 'old-node-admin-key-0123456789' });
    const help = run(OLD_NODE!, [BIN, '--help'], env);
    assert.equal(help.status, 0, help.stderr);
    assert.equal(help.stderr, '');
    assert.match(help.stdout, /^Usage: stockist /);

    const ways: { name: string; group?: boolean; stop: (launcher: ChildProcess, dataDir: string) => void }[] = [
      { name: 'SIGTERM to the launcher (a service manager)', stop: (launcher) => launcher.kill('SIGTERM') },
      {
        name: '`stockist stop` (the pid file)',
        stop: (_, dataDir) => {
          const stopped = run(OLD_NODE!, [BIN, 'stop'], { ...env, DATA_DIR: dataDir });
          assert.equal(stopped.status, 0, stopped.stderr);
          assert.match(stopped.stdout, /^stopped Stockist pid \d+ \(stockist\.pid\)/);
        },
      },
      // A terminal's Ctrl-C: SIGINT to every process of the foreground job. The server must get it
      // once (a second SIGINT means "stop now", without the clean shutdown).
      { name: 'SIGINT to the whole job (Ctrl-C in a terminal)', group: true, stop: (launcher) => process.kill(-launcher.pid!, 'SIGINT') },
    ];
    for (const way of ways) {
      const dataDir = tempDir();
      t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const port = await freePort();
      const serveEnv = { ...env, DATA_DIR: dataDir, DATABASE_URL: `sqlite:${path.join(dataDir, 'old-node.db')}` };
      const s = await startOnOldNode(t, OLD_NODE!, ['--max-semi-space-size=4', BIN, 'serve', '--port', String(port)], serveEnv, dataDir, way);
      assert.notEqual(s.serverPid, s.launcher.pid, `${way.name}: the server is a process of its own, which writes its own pid`);
      if (fs.existsSync('/proc/self')) {
        assert.equal(fs.realpathSync(`/proc/${s.serverPid}/exe`), fs.realpathSync(process.execPath), 'the server runs on the fetched Node');
        const argv = fs.readFileSync(`/proc/${s.serverPid}/cmdline`, 'utf8').split('\0');
        assert.deepEqual(argv.slice(1, 6), ['--max-semi-space-size=4', BIN, 'serve', '--port', String(port)], 'the same Node flags and arguments');
        // Outside the job's process group: a terminal's Ctrl-C reaches the server only through the
        // launcher, once (whether two SIGINTs close together end it unclean is a matter of timing).
        assert.notEqual(processGroup(s.serverPid), processGroup(s.launcher.pid!), 'the server has a process group of its own');
      }
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
      way.stop(s.launcher, dataDir);
      assert.deepEqual(await s.ended, { code: 0, signal: null }, `${way.name}: the launcher ends as the server did, cleanly\n${s.output()}`);
      assert.ok(!isRunning(s.serverPid), `${way.name}: the server is gone`);
      assert.ok(!fs.existsSync(path.join(dataDir, 'stockist.pid')), `${way.name}: a clean shutdown removed the pid file`);
      assert.equal(s.output().match(/shutting down/g)?.length, 1, `${way.name}: one shutdown\n${s.output()}`);
      noStackTrace(s.output());
    }
  });
});
