import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { openStore as OpenStore, Store } from '../src/store/db.ts';
import type { migrateToLatest as MigrateToLatest } from '../src/store/migrate.ts';

/** An empty, migrated bench database and how to remove it. */
export interface FreshStore {
  /** The DATABASE_URL a server takes (on PostgreSQL, with its own schema on the search path). */
  url: string;
  /** Open on the new database; the caller closes it. */
  store: Store;
  cleanup: () => Promise<void>;
}

/** The store code to open it with: this checkout's, or (for an A/B bench) another checkout's, loaded from there. */
export interface StoreCode {
  openStore: typeof OpenStore;
  migrateToLatest: typeof MigrateToLatest;
}

/** `pgUrl` with `schema` first on the search path, as the server's DATABASE_URL takes it. */
export const withSchema = (pgUrl: string, schema: string) => `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`;

export async function dropSchema(code: StoreCode, pgUrl: string, schema: string): Promise<void> {
  const admin = await code.openStore(pgUrl);
  try {
    await admin.db.schema.dropSchema(schema).ifExists().cascade().execute();
  } finally {
    await admin.close();
  }
}

/**
 * Opens a fresh database: on `db` 'postgres' a schema of its own (`<name>_<time>`) at `pgUrl`,
 * otherwise a SQLite file in a temporary folder (`stockist-<name>-…`); migrated to the latest
 * schema. `cleanup` drops the schema or removes the folder.
 */
export async function freshStore(code: StoreCode, db: string, pgUrl: string, name: string): Promise<FreshStore> {
  let fresh: FreshStore;
  if (db === 'postgres') {
    const schema = `${name}_${Date.now().toString(36)}`.replace(/[^a-z0-9_]/gi, '_');
    fresh = {
      url: withSchema(pgUrl, schema),
      store: await code.openStore(pgUrl, { schema, poolSize: 4 }),
      cleanup: () => dropSchema(code, pgUrl, schema),
    };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `stockist-${name}-`));
    const url = `sqlite:${path.join(dir, 'bench.db')}`;
    fresh = { url, store: await code.openStore(url), cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  await code.migrateToLatest(fresh.store);
  return fresh;
}
