import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type Database from 'better-sqlite3'

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url))

/** Applies each migrations/*.sql file once, in name order, each in its own transaction. */
export function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)')
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
  const applied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?')
  const record = db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)')
  for (const file of files) {
    // IMMEDIATE takes the write lock first, so two processes starting at once apply each file once.
    db.transaction(() => {
      if (applied.get(file)) return
      db.exec(readFileSync(MIGRATIONS_DIR + file, 'utf8'))
      record.run(file, Date.now())
    }).immediate()
  }
}
