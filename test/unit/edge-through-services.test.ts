/**
 * dependency-cruiser's `edge-through-services` (.dependency-cruiser.cjs; docs/decisions.md, "Routes
 * and pages call services, never repositories"): http/ and web/ import from store/ only types,
 * tenancy.ts and faults.ts. `npm run lint` holds the real tree to it; this runs the project's
 * configuration over a small tree of its own, so a rule that stopped refusing would fail here.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

const TREE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', allowImportingTsExtensions: true, noEmit: true } }),
  'src/store/db.ts': 'export type Store = { db: unknown };\nexport const ping = async (_db: unknown) => {};\n',
  'src/store/orders.repository.ts': 'export type OrderRow = { id: number };\nexport const findOrder = async (_db: unknown, id: number) => ({ id });\n',
  'src/store/tenancy.ts': 'export const forMerchant = (db: unknown, merchantId: number) => ({ db, merchantId });\n',
  'src/store/faults.ts': 'export const isStorageUnavailable = (_e: unknown) => false;\n',
  'src/services/orders.service.ts':
    "import { findOrder } from '../store/orders.repository.ts';\nexport const orderOf = (db: unknown, id: number) => findOrder(db, id);\n",
  // Allowed: types, the scope, the fault classification, a service.
  'src/http/routes/fine.ts': [
    "import type { Store } from '../../store/db.ts';",
    "import type { OrderRow } from '../../store/orders.repository.ts';",
    "import { forMerchant } from '../../store/tenancy.ts';",
    "import { isStorageUnavailable } from '../../store/faults.ts';",
    "import { orderOf } from '../../services/orders.service.ts';",
    'export const fine = (s: Store, r: OrderRow) => [forMerchant(s.db, r.id), isStorageUnavailable(null), orderOf(s.db, 1)];',
  ].join('\n'),
  // Refused: a repository function from a route, db.ts code from a page.
  'src/http/routes/repository.ts': "import { findOrder } from '../../store/orders.repository.ts';\nexport const route = () => findOrder(null, 1);\n",
  'src/web/console/pages/ping.ts': "import { ping } from '../../../store/db.ts';\nexport const page = () => ping(null);\n",
};

describe('http/ and web/ reach the store through services', () => {
  it('edge-through-services refuses a repository or db.ts import from a route or a page, and lets types, the scope and faults through', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-edge-'));
    try {
      for (const [file, text] of Object.entries(TREE)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      }
      const run = spawnSync(
        path.join(ROOT, 'node_modules/.bin/depcruise'),
        ['src', '--config', path.join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json'],
        { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      );
      const result = JSON.parse(run.stdout) as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
      assert.deepEqual(result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort(), [
        'edge-through-services: src/http/routes/repository.ts → src/store/orders.repository.ts',
        'edge-through-services: src/web/console/pages/ping.ts → src/store/db.ts',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
