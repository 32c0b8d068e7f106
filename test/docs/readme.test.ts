import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { buildCli } from '../../src/cli/main.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const section = (title: string) => {
  const start = readme.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `README has a "${title}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
};

/** Issue 17 item 5: the README is what a user reads first; keep it true and complete. */
describe('README', () => {
  it('starts with the two commands, and links every document from one Documentation list', () => {
    assert.ok(readme.indexOf('npm install && npm start') < readme.indexOf('## Documentation'));
    assert.ok(readme.indexOf('npm install && npm test') < readme.indexOf('## Documentation'));
    const docs = section('Documentation');
    for (const file of fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'))) {
      assert.ok(docs.includes(`(docs/${file})`), `the Documentation list links docs/${file}`);
    }
  });

  it('links only to files that exist', () => {
    for (const [, target] of readme.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g)) {
      if (/^https?:/.test(target)) continue;
      assert.ok(fs.existsSync(path.resolve(ROOT, target)), `${target} exists`);
    }
  });

  it('links nothing outside the repository and speaks no internal shorthand (a clone is all a reader has)', () => {
    for (const [, target] of readme.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g)) {
      if (/^https?:/.test(target)) continue;
      const resolved = path.resolve(ROOT, target);
      assert.ok(resolved.startsWith(ROOT + path.sep), `${target} is inside the repository`);
    }
    assert.doesNotMatch(readme, /\.\.\//, 'no path above the repository (../)');
    for (const [pattern, what] of [
      [/\bSPEC\b|§/, "the contract's section numbers"],
      [/\bissue[- ]?\d+/i, 'issue numbers'],
      [/\bshared\//, 'the shared/ folder beside the repository'],
    ] as const) {
      assert.doesNotMatch(readme, pattern, `the README cites ${what}`);
    }
  });

  it('names both web front ends and their demo sign-ins, as npm start prints them', () => {
    const start = section('Two commands');
    assert.match(start, /owner@stockist\.test/);
    assert.match(start, /admin@demo-merchant\.test/);
    assert.match(start, /`\/console`/);
    assert.match(start, /`\/manager`/);
  });

  it('lists every CLI command and every configuration variable', () => {
    const commands = section('Command line');
    for (const command of buildCli().commands) {
      assert.ok(commands.includes(`| \`${command.name()}`), `the command table has \`${command.name()}\``);
    }
    const configuration = section('Configuration');
    const source = fs.readFileSync(path.join(ROOT, 'src/config.ts'), 'utf8');
    const variables = new Set([...source.matchAll(/\(env, '([A-Z_]+)'/g)].map((m) => m[1]));
    assert.ok(variables.size > 30);
    for (const variable of variables) assert.ok(configuration.includes(`\`${variable}\``), `the configuration table has ${variable}`);
  });

  it('states the Node.js versions that package.json declares', () => {
    const engines = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines.node;
    assert.equal(engines, '>=22', 'update the README sentence with the engines field');
    assert.match(section('Two commands'), /Node\.js 24\*\* \(tested: 24\.\d+, what CI runs\) \*\*or 22\*\*/);
    assert.match(section('Two commands'), /`\. scripts\/use-node-24\.sh`/, 'says how to get Node.js 24 with an older one');
  });
});
