import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(ROOT, 'bin/stockist.js');

export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-e2e-'));
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * What every server a test starts runs with: plain HTTP, the sandbox, its operator's key, no demo
 * seed, a rate budget no test reaches, and no load shedding (a loaded test machine is not an
 * overloaded server). A test adds its database, its data directory and what it is about.
 */
export const serverTestEnv = (adminKey: string, logLevel: 'error' | 'warn' = 'error') => ({
  TLS: 'off',
  LOG_LEVEL: logLevel,
  STOCKIST_ENV: 'sandbox',
  ADMIN_API_KEY: adminKey,
  SEED: 'none',
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '1000000',
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
});

/**
 * Runs the real CLI to completion. The bound is generous: on a loaded 2-core machine loading the
 * sources alone took most of a minute, and a command cut short fails as if it had failed itself.
 */
export function runCli(args: string[], env: Record<string, string>, cwd = ROOT) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, encoding: 'utf8', timeout: 180_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs the real CLI to completion without blocking this process's event loop: for a command that
 * runs while this process keeps a load going (`stockist backup` beside a server under orders).
 * `onSpawn` gets the child at once, for a test that kills it mid-way.
 */
export function runCliAsync(
  args: string[],
  env: Record<string, string>,
  onSpawn?: (child: ChildProcess) => void,
): Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  onSpawn?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}

/**
 * `TEST_SERVE_PROCESSES=N` runs every API server the tests start as `serve --processes N` (the
 * suites that start servers — the crash test, the two-process tests — then hold for a group of
 * processes too); a `--role worker` server and a command that names its own count stay as asked.
 */
function withTestProcesses(args: string[]): string[] {
  const n = process.env.TEST_SERVE_PROCESSES;
  if (!n || args[0] !== 'serve' || args.includes('--processes')) return args;
  const role = args[args.indexOf('--role') + 1];
  return args.includes('--role') && role === 'worker' ? args : [...args, '--processes', n];
}

/**
 * Starts the real server process and waits until its output contains `ready`: at most
 * `readyWithinMs`, which is generous (a loaded machine takes tens of seconds to load the sources).
 */
export async function startProcess(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  readyWithinMs = 120_000,
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [BIN, ...withTestProcesses(args)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within ${readyWithinMs} ms:\n${out}`));
    }, readyWithinMs);
    const check = () => {
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  return { child, output: () => out };
}

/**
 * Resolves once `child` has exited: at once when it already has. A child ended by a signal keeps
 * `exitCode` null (its `signalCode` is set), so both are looked at; waiting on 'exit' for a child
 * that is already gone would wait for ever.
 */
export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );
}
