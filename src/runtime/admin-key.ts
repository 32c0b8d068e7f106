import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { randomToken } from '../domain/secrets.ts';

export interface AdminKey {
  key: string;
  /** True when this call created it (it is printed once, then only its file is named). */
  generated: boolean;
  file: string | null;
}

/** ADMIN_API_KEY, or the key kept in the data directory, generated there on first use. */
export function resolveAdminKey(config: Config): AdminKey {
  if (config.adminApiKey) return { key: config.adminApiKey, generated: false, file: null };
  const file = path.join(config.dataDir, 'admin-key');
  if (fs.existsSync(file)) return { key: fs.readFileSync(file, 'utf8').trim(), generated: false, file };
  fs.mkdirSync(config.dataDir, { recursive: true });
  const key = `sk_admin_${randomToken(40)}`;
  fs.writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { key, generated: true, file };
}
