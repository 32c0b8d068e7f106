import path from 'node:path';

/** The SQLite file a `sqlite:` URL names, resolved against the current directory; null otherwise. */
export function sqliteFile(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null;
  const file = url.slice('sqlite:'.length);
  return file === ':memory:' ? null : path.resolve(file);
}

/** What the CLI says it works on: the absolute SQLite path, or the PostgreSQL URL without its password. */
export function describeDatabase(url: string): string {
  const file = sqliteFile(url);
  if (file) return `sqlite:${file}`;
  if (url.startsWith('sqlite:')) return url;
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
