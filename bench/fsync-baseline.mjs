#!/usr/bin/env node
import { rmSync } from 'node:fs'
// Baseline for the durability comparison: what "one fsync per request" allows on this disk.
// Commits single-row INSERTs one after another into a SQLite file in WAL mode with
// synchronous=FULL (what DURABILITY=power sets), i.e. one WAL fsync per commit and no grouping,
// for a fixed time, with no HTTP in the way. Its commits/s is an upper bound for a service that
// would fsync once per request.
//
// Usage: node bench/fsync-baseline.mjs <file.db> <seconds>   -> BENCH_JSON {"commits":N,"seconds":S,"commitsPerSecond":R,...}
import Database from 'better-sqlite3'

const [file, secondsArg = '5'] = process.argv.slice(2)
if (!file) {
  process.stderr.write('usage: node bench/fsync-baseline.mjs <file.db> <seconds>\n')
  process.exit(2)
}
for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })

const db = new Database(file)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = FULL')
db.exec(`CREATE TABLE pets (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, category_id INTEGER NOT NULL,
  status TEXT CHECK (status IN ('available', 'pending', 'sold')));
  CREATE INDEX pets_status_id ON pets (status, id);`)
const insert = db.prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING id')

const limitNs = BigInt(Math.round(Number(secondsArg) * 1e9))
const start = process.hrtime.bigint()
let commits = 0
const latencies = []
for (;;) {
  const t = process.hrtime.bigint()
  if (t - start >= limitNs) break
  insert.get('rex', 1, 'available') // autocommit: one transaction, one WAL fsync
  latencies.push(Number(process.hrtime.bigint() - t) / 1000)
  commits++
}
const seconds = Number(process.hrtime.bigint() - start) / 1e9
db.close()
for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
latencies.sort((a, b) => a - b)
const at = (q) => latencies[Math.min(latencies.length - 1, Math.ceil((q / 100) * latencies.length) - 1)] ?? 0
process.stdout.write(
  `BENCH_JSON ${JSON.stringify({ commits, seconds, commitsPerSecond: commits / seconds, commitLatencyUs: { 50: at(50), 99: at(99) } })}\n`,
)
