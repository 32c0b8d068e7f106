// Builds the typed client (clients/typescript) into the npm package the server hands out at
// /sdk/stockist-client-<version>.tgz (src/http/routes/sdk.ts): one ES module (the client and the
// webhook signature module it shares with the server, bundled by esbuild), its type declarations
// (tsc), the README and the runnable example. No dependencies: `npm install <the .tgz URL>` needs
// no registry. The .tgz is written here, at build time, with node-tar (the archiver npm itself
// uses), its entries in name order with npm pack's fixed date and no owner, so the same sources give
// the same bytes; the server reads it from dist/sdk/ and needs neither npm nor node-tar.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';

/** The file name npm gives a pack of the scoped package @stockist/client. */
export const tarballName = (version) => `stockist-client-${version}.tgz`;

export async function buildSdk(root, esbuild, outDir) {
  const require = createRequire(import.meta.url);
  const ts = require('typescript');
  const clientDir = path.join(root, 'clients/typescript');
  const manifest = JSON.parse(fs.readFileSync(path.join(clientDir, 'package.json'), 'utf8'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-sdk-'));
  try {
    const files = new Map();
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: [path.join(clientDir, 'src/index.ts')],
      outfile: path.join(work, 'index.js'),
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'warning',
    });
    files.set('index.js', fs.readFileSync(path.join(work, 'index.js')));

    // Declarations: emitted beside the sources' layout (the client imports ../../../src/domain/…),
    // with rootDir at the repository, so the relative imports between them still hold.
    const program = ts.createProgram([path.join(clientDir, 'src/index.ts')], {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      strict: true,
      skipLibCheck: true,
      allowImportingTsExtensions: true,
      rewriteRelativeImportExtensions: true,
      declaration: true,
      emitDeclarationOnly: true,
      rootDir: root,
      outDir: path.join(work, 'types'),
      types: ['node'],
    });
    const emitted = program.emit();
    const problems = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
    if (problems.length > 0)
      throw new Error(ts.formatDiagnostics(problems, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' }));
    // schema.d.ts is a declaration already: tsc does not copy it.
    fs.copyFileSync(path.join(clientDir, 'src/schema.d.ts'), path.join(work, 'types/clients/typescript/src/schema.d.ts'));
    const addTree = (dir, prefix) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        if (entry.isDirectory()) addTree(path.join(dir, entry.name), `${prefix}${entry.name}/`);
        else files.set(`${prefix}${entry.name}`, fs.readFileSync(path.join(dir, entry.name)));
      }
    };
    addTree(path.join(work, 'types'), 'types/');
    addTree(path.join(clientDir, 'examples'), 'examples/');
    files.set('README.md', fs.readFileSync(path.join(clientDir, 'README.md')));

    const types = './types/clients/typescript/src/index.d.ts';
    const packageJson = {
      name: manifest.name,
      version: manifest.version,
      description: manifest.description,
      type: 'module',
      license: manifest.license,
      engines: manifest.engines,
      exports: { '.': { types, default: './index.js' } },
      types,
    };
    files.set('package.json', Buffer.from(`${JSON.stringify(packageJson, null, 2)}\n`));

    fs.mkdirSync(outDir, { recursive: true });
    const name = tarballName(manifest.version);
    // npm's layout: everything under package/. Files only, listed in name order (no directory walk,
    // whose order is the file system's).
    const staged = path.join(work, 'staged');
    for (const [file, data] of files) {
      fs.mkdirSync(path.dirname(path.join(staged, 'package', file)), { recursive: true });
      fs.writeFileSync(path.join(staged, 'package', file), data);
    }
    tar.create(
      { gzip: { level: 9 }, cwd: staged, file: path.join(outDir, name), sync: true, portable: true, mtime: NPM_PACK_DATE, noDirRecurse: true },
      [...files.keys()].sort((a, b) => a.localeCompare(b)).map((file) => `package/${file}`),
    );
    // Served at /sdk/read-stock.mjs too, to read before installing.
    fs.copyFileSync(path.join(clientDir, 'examples/read-stock.mjs'), path.join(outDir, 'read-stock.mjs'));
    return name;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The date npm pack gives every entry (1985-10-26T08:15:00Z), so a pack does not change with the build's time. */
const NPM_PACK_DATE = new Date(499162500 * 1000);
