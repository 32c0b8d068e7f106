// Stockist needs Node.js 22 or later: better-sqlite3 13's binary ends an older Node with a
// segmentation fault as it loads, with nothing said (SPEC §16). Every entry point asks here first,
// before it loads anything native: bin/stockist.js, scripts/test.mjs and scripts/build.mjs call
// runOnSupportedNode(); `npm install`'s preinstall and `npm test`'s first step run
// scripts/check-node.mjs. On an older Node they either run again on the Node.js 24 that
// scripts/use-node-24.sh fetched, or stop with one line that names the fix (docs/decisions.md,
// "Starting on an old Node.js").
// An old Node parses this file: node: built-ins only, no syntax newer than Node 18's. It lives in
// bin/ because a deployment copies bin/ and dist/ without scripts/ (docs/deployment.md).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MIN_MAJOR = 22;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fetchScript = path.join(root, 'scripts/use-node-24.sh');
// The signals a terminal or a service manager sends to end a process; the rest are left alone.
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];
// Set in the environment of a run on the fetched Node, so that a fetched Node that is itself too
// old (a STOCKIST_NODE_DIR pointing at one) stops with the line instead of starting itself again.
const RELAUNCHED = 'STOCKIST_RELAUNCHED_ON';

function isTooOld(version = process.versions.node) {
  return Number(version.split('.')[0]) < MIN_MAJOR;
}

/** scripts/use-node-24.sh's default version, read from the script so that it is written once. */
function defaultVersion() {
  try {
    const m = /STOCKIST_NODE_VERSION="\$\{STOCKIST_NODE_VERSION:-([0-9][0-9.]*)\}"/.exec(fs.readFileSync(fetchScript, 'utf8'));
    return m ? m[1] : null;
  } catch {
    return null;
  }
}

/** Where scripts/use-node-24.sh installs: the same variables, the same defaults (empty = unset, as in the shell). */
function fetchedNodeDir(env = process.env) {
  if (env.STOCKIST_NODE_DIR) return env.STOCKIST_NODE_DIR;
  const version = env.STOCKIST_NODE_VERSION || defaultVersion();
  if (!version) return null;
  return path.join(env.STOCKIST_NODE_HOME || path.join(env.HOME || os.homedir(), '.cache/stockist'), `node-v${version}`);
}

/** The fetched Node's executable when there is one. */
function fetchedNode(env = process.env) {
  const dir = fetchedNodeDir(env);
  if (!dir) return null;
  const node = path.join(dir, 'bin/node');
  try {
    fs.accessSync(node, fs.constants.X_OK);
    return node;
  } catch {
    return null;
  }
}

/** The one line: what is wrong and the command that fixes it, as the reader would type it here. */
function fixLine(version = process.versions.node) {
  const where = process.env[RELAUNCHED] ? ` (${process.execPath})` : '';
  const head = `stockist: Node.js ${version}${where} is too old; Stockist needs ${MIN_MAJOR} or later.`;
  if (!fs.existsSync(fetchScript)) return `${head} Install Node.js 24, then run this again.`;
  const script = path.resolve(process.cwd()) === root ? 'scripts/use-node-24.sh' : fetchScript;
  return `${head} Run \`. ${script}\` (fetches Node.js 24 from the npm registry) or install Node.js 24, then run this again.`;
}

/**
 * Returns at once on Node 22 or later. On an older Node: with a fetched Node.js 24, runs this
 * program again on it (same arguments, same Node flags) and ends as it ends; the promise never
 * settles, so nothing after the caller's `await` runs here. Without one: the line, exit 1.
 */
export function runOnSupportedNode() {
  if (!isTooOld()) return Promise.resolve();
  const node = process.env[RELAUNCHED] ? null : fetchedNode();
  if (!node) {
    process.stderr.write(`${fixLine()}\n`);
    process.exit(1);
  }
  relaunch(node);
  return new Promise(() => undefined);
}

function relaunch(node) {
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    // A process group (and session) of its own. A terminal's Ctrl-C goes to its whole foreground
    // group: were the child in it, it would get SIGINT from the terminal and again from us, and the
    // server's second SIGINT means "stop now" (no clean shutdown). Here only this process gets it
    // and passes it on once, to the child's group as the terminal would have.
    detached: true,
    // First on PATH: whatever the child starts as `node` (npm, a test's subprocess) runs on it too.
    env: { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH || ''}`, [RELAUNCHED]: node },
  });
  const forward = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The child's group is gone: its exit is on its way.
    }
  };
  for (const signal of FORWARDED) process.on(signal, forward);
  child.on('error', (error) => {
    process.stderr.write(`stockist: could not start ${node}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code === null ? 1 : code);
    // Ended by a signal: end the same way, so that a shell or npm reads the same status.
    for (const s of FORWARDED) process.removeListener(s, forward);
    process.kill(process.pid, signal);
    process.exit(128 + (os.constants.signals[signal] || 0));
  });
}

/**
 * `npm install`'s preinstall and `npm test`'s first step (scripts/check-node.mjs): nothing on
 * Node 22 or later; on an older Node, a note when a fetched Node will run the program (exit 0),
 * else the line (exit 1).
 */
export function checkNodeForNpm() {
  if (!isTooOld()) return 0;
  const node = fetchedNode();
  if (node === null) {
    process.stderr.write(`${fixLine()}\n`);
    return 1;
  }
  process.stderr.write(
    `stockist: Node.js ${process.versions.node} is too old for Stockist; \`npm start\`, \`npm test\` and \`npx stockist\` run on the Node.js that scripts/use-node-24.sh fetched (${path.dirname(path.dirname(node))}).\n`,
  );
  return 0;
}
