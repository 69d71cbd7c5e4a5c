/**
 * What DATABASE_URL names: PostgreSQL (`postgres://…`, `postgresql://…`) or else a SQLite file. The
 * one test of each, for the configuration and the stores alike.
 */

/** DATABASE_URL names PostgreSQL (anything else is a SQLite file). */
export const isPostgresUrl = (databaseUrl: string): boolean => /^postgres(ql)?:\/\//.test(databaseUrl)

/** `data/x.db`, `/abs/x.db`, `sqlite:data/x.db`, `sqlite:///abs/x.db`, `sqlite::memory:` -> a file name for SQLite. */
export function sqliteFilename(databaseUrl: string): string {
  let name = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : databaseUrl
  if (name.startsWith('//')) name = name.slice(2)
  return name
}

/** What is wrong with DATABASE_URL (the message after its name), or undefined. */
export function databaseUrlProblem(value: string): string | undefined {
  return isPostgresUrl(value) || value.startsWith('sqlite:') || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)
    ? undefined
    : `must be a file path, a sqlite: URL or a postgres:// URL (got scheme ${JSON.stringify(value.split(':')[0])})`
}

/** What is wrong with DATABASE_LISTEN_URL (the message after its name), or undefined. */
export function listenUrlProblem(value: string): string | undefined {
  return value === 'off' || isPostgresUrl(value)
    ? undefined
    : `must be a postgres:// URL or off (got scheme ${JSON.stringify(value.split(':')[0])})`
}
