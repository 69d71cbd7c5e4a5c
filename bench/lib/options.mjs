// The benchmark's options: flags, or BENCH_<NAME> environment variables (e.g. BENCH_ROUNDS=3); flags win.
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { CONFIG_VARS } from '../../tools/service-env.mjs'
import { SQLITE_SCENARIOS } from './scenarios.mjs'
import { ROOT } from './service.mjs'

/** `A=1,B=2` -> { A: '1', B: '2' }; only the service's own configuration variables. */
function serviceEnvOption(raw) {
  if (raw === undefined || raw === '') return {}
  const env = {}
  for (const pair of raw.split(',')) {
    const [name, ...value] = pair.split('=')
    if (!CONFIG_VARS.includes(name) || value.length === 0)
      throw new Error(`--service-env: ${JSON.stringify(pair)} is not NAME=VALUE of a service setting`)
    env[name] = value.join('=')
  }
  return env
}

/** `--a=1,--b` -> ['--a=1', '--b']: V8/Node flags of the service process only (never the peers'). */
function serviceNodeFlagsOption(raw) {
  if (raw === undefined || raw === '') return []
  const flags = raw.split(',')
  for (const flag of flags)
    if (!/^--[a-z0-9][a-z0-9-]*(=[A-Za-z0-9._-]+)?$/.test(flag))
      throw new Error(`--service-node-flags: ${JSON.stringify(flag)} is not a flag such as --max-semi-space-size=4`)
  return flags
}

const OPTIONS = {
  quick: {
    type: 'boolean',
    help: 'one short round of list20 + post on a small catalogue, a tiny growth check; no PG, durability, profile',
  },
  rounds: { type: 'string', help: 'measured rounds per scenario (default 5; quick 1)' },
  duration: { type: 'string', help: 'seconds per round, integer (default 10; quick 2)' },
  warmup: { type: 'string', help: 'warm-up seconds per server before the rounds, integer (default 5; quick 1)' },
  connections: { type: 'string', help: 'wrk keep-alive connections (default 50)' },
  catalogue: { type: 'string', help: 'pets in the catalogue of the main SQLite scenarios (default 10000; quick 1000)' },
  scenarios: { type: 'string', help: 'comma list of list20,list100,get,post (default all; quick list20,post)' },
  growth: {
    type: 'string',
    help: 'comma list of catalogue sizes for the growth check, or "none" (default 10000,100000,1000000; quick 2000)',
  },
  rate: { type: 'string', help: 'fixed request rate of the growth check, req/s (default 1000)' },
  'paced-duration': { type: 'string', help: 'seconds per growth measurement (default 10; quick 2)' },
  'distinct-pages': { type: 'string', help: 'distinct pages (after= values) per growth query, used round-robin (default 2000)' },
  pg: { type: 'boolean', help: 'run the PostgreSQL + Redis scenarios (default on; off with --quick)' },
  'no-pg': { type: 'boolean', help: 'skip PostgreSQL + Redis' },
  durability: { type: 'boolean', help: 'run the DURABILITY=power comparison (default on; off with --quick)' },
  'no-durability': { type: 'boolean', help: 'skip the durability comparison' },
  profile: { type: 'boolean', help: 'profile the service (node --cpu-prof) for one GET list round (default on; off with --quick)' },
  'no-profile': { type: 'boolean', help: 'skip the CPU profile' },
  'pg-url': { type: 'string', help: 'PostgreSQL server to create the bench database on (default postgres://postgres@127.0.0.1:5432/test)' },
  'pg-database': {
    type: 'string',
    help: 'name of the database created (dropped first) and dropped for the PG+Redis scenarios (default animal_store_bench_<pid>)',
  },
  'redis-url': { type: 'string', help: 'Redis for the PG+Redis scenarios (default redis://127.0.0.1:6379)' },
  'void-threshold': { type: 'string', help: 'CPU used by other processes, % of one core, above which a round is void (default 3)' },
  'max-retries': { type: 'string', help: 'reruns of a void round before giving up on it (default 3; quick 0)' },
  'quiet-wait': {
    type: 'string',
    help: 'max seconds to wait for a quiet machine (2 quiet 1 s windows) before each round (default 120; quick 2)',
  },
  cluster: {
    type: 'boolean',
    help: 'run `serve --workers N` with the Redis limiter for each of --workers, to measure scaling (default on; off with --quick)',
  },
  'no-cluster': { type: 'boolean', help: 'skip the cluster scaling section' },
  peers: {
    type: 'boolean',
    help: 'run the peers in the same rounds on list20 and post: bare Fastify (SQLite), a minimal Fastify+pg+ioredis service (PG+Redis) (default on, also with --quick)',
  },
  'no-peers': { type: 'boolean', help: 'skip the peers' },
  'sqlite-peer': {
    type: 'string',
    help: "the SQLite path's peer: bare-fastify (default: the framework alone, replaying bytes) or sqlite (a hand-written Fastify + better-sqlite3 service with keys, a two-window limiter and its headers)",
  },
  workers: { type: 'string', help: 'comma list of worker counts for the cluster section (default 1,2)' },
  only: { type: 'string', help: 'comma list of sections to run: main,profile,orders,growth,durability,pg,cluster (default all)' },
  'order-connections': { type: 'string', help: 'connections of the order-flow load, each over animals of its own (default 16)' },
  out: { type: 'string', help: 'directory for <date>.json and <date>.md (default bench/results)' },
  'max-minutes': { type: 'string', help: 'hard deadline for the whole run; partial results are written (default 90)' },
  'keep-tmp': { type: 'boolean', help: 'keep the temp dir (databases, logs, profile)' },
  'service-env': {
    type: 'string',
    help: 'comma list NAME=VALUE of service settings for every service started (e.g. LIMITER_STATE_FILE=off, to measure what a feature costs)',
  },
  'service-node-flags': {
    type: 'string',
    help: 'comma list of node flags for every service started, not the peers (e.g. --max-semi-space-size=4, to measure what a V8 setting costs)',
  },
  help: { type: 'boolean', short: 'h' },
}

function sqlitePeerOption(raw) {
  const kind = raw ?? 'bare-fastify'
  if (kind !== 'bare-fastify' && kind !== 'sqlite') throw new Error(`--sqlite-peer: bare-fastify or sqlite (got ${raw})`)
  return kind
}

/** Interpolated (quoted) into CREATE/DROP DATABASE and matched in `ps` output: plain identifiers only. */
function pgDatabaseOption(raw) {
  // By default the run's own: two runs at once (a worktree's and main's) must not drop each other's database.
  const name = raw ?? `animal_store_bench_${process.pid}`
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`--pg-database must be a plain lower-case identifier (got ${raw})`)
  return name
}

/**
 * The options of this run (node bench/run.mjs --help lists them); --help prints them and exits.
 * @typedef {ReturnType<typeof parseOptions>} Options
 */
export function parseOptions() {
  const { values } = parseArgs({
    options: Object.fromEntries(Object.entries(OPTIONS).map(([k, v]) => [k, { type: v.type, ...(v.short ? { short: v.short } : {}) }])),
  })
  if (values.help) {
    process.stdout.write('Usage: node bench/run.mjs [options]   (build first: npm run build)\n\n')
    for (const [k, v] of Object.entries(OPTIONS)) if (v.help) process.stdout.write(`  --${k.padEnd(16)} ${v.help}\n`)
    process.stdout.write('\nEvery option can also be given as BENCH_<NAME> (e.g. BENCH_ROUNDS=3, BENCH_QUICK=1, BENCH_NO_PG=1).\n')
    process.exit(0)
  }
  const env = (name) => process.env[`BENCH_${name.toUpperCase().replaceAll('-', '_')}`]
  const get = (name) => values[name] ?? env(name)
  const flag = (name) => {
    const v = get(name)
    return v === true || v === '1' || v === 'true'
  }
  const quick = flag('quick')
  const num = (name, full, q, { integer = true, min = 0 } = {}) => {
    const raw = get(name)
    const n = raw === undefined ? (quick ? q : full) : Number(raw)
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
      throw new Error(`--${name} must be ${integer ? 'an integer' : 'a number'} >= ${min} (got ${raw})`)
    }
    return n
  }
  const onOff = (name) => (flag(`no-${name}`) ? false : get(name) !== undefined ? flag(name) : !quick)
  const list = (name, full, q) => {
    const raw = get(name) ?? (quick ? q : full)
    return raw === 'none' || raw === ''
      ? []
      : String(raw)
          .split(',')
          .map((s) => s.trim())
  }
  const scenarios = list('scenarios', 'list20,list100,get,post', 'list20,post')
  for (const s of scenarios)
    if (!SQLITE_SCENARIOS[s]) throw new Error(`unknown scenario ${s} (known: ${Object.keys(SQLITE_SCENARIOS).join(', ')})`)
  const growth = list('growth', '10000,100000,1000000', '2000').map(Number)
  if (growth.some((n) => !Number.isInteger(n) || n < 200)) throw new Error('--growth sizes must be integers >= 200')
  const sections = ['main', 'profile', 'orders', 'growth', 'durability', 'pg', 'cluster']
  const only = list('only', sections.join(','), sections.join(','))
  for (const s of only) if (!sections.includes(s)) throw new Error(`unknown section ${s} in --only`)
  const workers = list('workers', '1,2', '1,2').map(Number)
  if (workers.some((n) => !Number.isInteger(n) || n < 1 || n > 64)) throw new Error('--workers must be integers from 1 to 64')
  return {
    quick,
    only,
    rounds: num('rounds', 5, 1, { min: 1 }),
    duration: num('duration', 10, 2, { min: 1 }),
    warmup: num('warmup', 5, 1),
    connections: num('connections', 50, 50, { min: 1 }),
    catalogue: num('catalogue', 10_000, 1000, { min: 200 }),
    orderConnections: num('order-connections', 16, 4, { min: 1 }),
    scenarios,
    growth,
    rate: num('rate', 1000, 1000, { min: 1 }),
    pacedDuration: num('paced-duration', 10, 2, { min: 1 }),
    distinctPages: num('distinct-pages', 2000, 2000, { min: 1 }),
    pg: onOff('pg'),
    cluster: onOff('cluster'),
    // Cheap enough for --quick too (two short scenarios), so the smoke run exercises them.
    peers: flag('no-peers') ? false : get('peers') !== undefined ? flag('peers') : true,
    sqlitePeer: sqlitePeerOption(get('sqlite-peer')),
    workers,
    durability: onOff('durability'),
    profile: onOff('profile'),
    pgUrl: get('pg-url') ?? 'postgres://postgres@127.0.0.1:5432/test',
    pgDatabase: pgDatabaseOption(get('pg-database')),
    redisUrl: get('redis-url') ?? 'redis://127.0.0.1:6379',
    voidThreshold: num('void-threshold', 3, 3, { integer: false }),
    maxRetries: num('max-retries', 3, 0),
    quietWait: num('quiet-wait', 120, 2),
    out: resolve(get('out') ?? join(ROOT, 'bench/results')),
    maxMinutes: num('max-minutes', 90, 10, { integer: false, min: 1 }),
    keepTmp: flag('keep-tmp'),
    serviceEnv: serviceEnvOption(get('service-env')),
    serviceNodeFlags: serviceNodeFlagsOption(get('service-node-flags')),
  }
}
