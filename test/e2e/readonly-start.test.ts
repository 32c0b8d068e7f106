import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, ROOT, runCli, tempDir } from './process.ts';

/** Tests may run as root, whom file modes do not stop: then the CLI runs as `nobody`, whom they do. */
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

function runAsUnprivileged(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 60_000,
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, error: r.error };
}

/**
 * As root the check needs `nobody` to be able to run this Node.js and read this checkout's CLI; a
 * Node.js or a checkout under a directory only root may enter (root's home, a `mktemp -d` folder:
 * mode 700) cannot be, and file modes then cannot be tested from here: skipped, saying which.
 */
function whyNobodyCannotRun(): string | null {
  if (!asRoot) return null;
  const asNobody = (code: string) => spawnSync(process.execPath, ['-e', code], { uid: NOBODY, gid: NOBODY, timeout: 30_000 }).status === 0;
  if (!asNobody('0')) {
    return `the user nobody cannot run ${process.execPath} (a parent directory is closed to others, e.g. root's home): put Node.js where others may read it, as .ci/run does with STOCKIST_NODE_HOME`;
  }
  if (!asNobody(`require('fs').accessSync(${JSON.stringify(BIN)}, require('fs').constants.R_OK)`)) {
    return `the user nobody cannot read ${BIN} (a parent directory is closed to others, e.g. a mktemp -d folder): run the tests from a checkout others may read`;
  }
  return null;
}

/**
 * Issue 13 item 15: starting on a database file Stockist may read but not write says so in plain
 * words (it used to print "migration unknown failed: attempt to write a readonly database").
 */
describe('start-up on a read-only SQLite file (real processes)', {
  skip: whyNobodyCannotRun() ?? false,
}, () => {
  for (const variant of ['the file is read-only', 'the file and its directory are read-only'] as const) {
    it(`says so in plain words when ${variant}`, (t) => {
      const dir = tempDir();
      const file = path.join(dir, 'ro.db');
      t.after(() => {
        fs.chmodSync(dir, 0o755);
        fs.rmSync(dir, { recursive: true, force: true });
      });
      const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${file}`, TLS: 'off', ADMIN_API_KEY: 'readonly-admin-key-0123456789', PORT: '0' };
      assert.equal(runCli(['migrate'], env).status, 0);
      for (const f of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, f), 0o444);
      fs.chmodSync(dir, variant === 'the file is read-only' ? 0o777 : 0o555);
      for (const args of [['migrate'], ['serve']]) {
        const r = runAsUnprivileged(args, env);
        assert.equal(r.error, undefined);
        assert.equal(r.status, 1, `${args}: ${r.stdout}${r.stderr}`);
        // Every command first names its database on a line of its own (the newcomer's path); then one line says what is wrong.
        const lines = r.stderr
          .trim()
          .split('\n')
          .filter((l) => !l.startsWith('stockist: database '));
        assert.equal(lines.length, 1, r.stderr);
        assert.match(
          lines[0],
          new RegExp(`^stockist: .*the database file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is read-only \\(SQLITE_READONLY[A-Z_]*\\)\\. `),
          r.stderr,
        );
        assert.match(lines[0], /permissions|owns/);
        assert.doesNotMatch(lines[0], /migration unknown/);
      }
    });
  }
});
