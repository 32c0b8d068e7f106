import fs from 'node:fs';
import type { Config } from '../config.ts';
import { describeDatabase, sqliteFile } from '../store/database-url.ts';

export { describeDatabase };

/** Which setting chose the database, in the words an operator would change. */
function origin(env: Record<string, string | undefined>): string {
  if (env.DATABASE_URL?.trim()) return `DATABASE_URL=${env.DATABASE_URL.trim()}`;
  if (env.DATA_DIR?.trim()) return `DATA_DIR=${env.DATA_DIR.trim()}`;
  return 'the default DATA_DIR ./data';
}

/** A command that works on existing data was pointed at a database that is not there. */
export class NoDatabase extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoDatabase';
  }
}

/**
 * Commands other than serve, migrate and seed must not create a database: run from the wrong
 * folder, they would silently make and migrate an empty one and fail later with a misleading error.
 */
export function requireExistingSqlite(config: Config, env: Record<string, string | undefined>, cwd = process.cwd()): void {
  const file = sqliteFile(config.databaseUrl);
  if (file === null || fs.existsSync(file)) return;
  throw new NoDatabase(
    `no database at ${file} (from ${origin(env)}, relative to ${cwd}); nothing was created. ` +
      'Run this command from the folder the server runs in, or point at the database with DATABASE_URL=sqlite:<file> or DATA_DIR=<folder> ' +
      '(relative paths are resolved against the current directory); `stockist migrate` creates a new, empty one.',
  );
}

export function noMigrations(url: string): NoDatabase {
  return new NoDatabase(
    `${describeDatabase(url)} has no Stockist tables; nothing was created. Point DATABASE_URL at the server's database, or run \`stockist migrate\` to set this one up.`,
  );
}
