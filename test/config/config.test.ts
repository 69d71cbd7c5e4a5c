import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'
import Fastify from 'fastify'
// @ts-expect-error: a plain .mjs script, run by tsx
import { CONFIGURATION_MD, generateConfigurationDoc, generateReadme, README_MD } from '../../scripts/config-docs.mjs'
import { CONFIG_VARIABLES, loadConfig, redisTarget } from '../../src/config/config.js'
import { CONFIG_FILE_VARIABLE } from '../../src/config/config-file.js'
import { ConfigError } from '../../src/shared/startup-error.js'
import { CONFIG_VARS } from '../../tools/service-env.mjs'

test('defaults: port 8080, SQLite under ./data, production, in-memory limiter', () => {
  const c = loadConfig({})
  assert.equal(c.port, 8080)
  assert.equal(c.databaseUrl, 'data/animal-store.db')
  assert.equal(c.env, 'production')
  assert.equal(c.redisUrl, undefined)
  assert.equal(c.durability, 'process')
  assert.equal(c.publicBaseUrl, undefined) // links are relative unless PUBLIC_BASE_URL is set
  assert.equal(c.trustProxy, false)
  assert.equal(c.shutdownDrainMs, 0) // no drain unless a load balancer needs one
})

test('a bad value stops start-up with a message naming the variable', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: 'abc' }, /^PORT must be an integer from 0 to 65535/],
    [{ PORT: '70000' }, /^PORT/],
    [{ ANIMAL_STORE_ENV: 'dev' }, /^ANIMAL_STORE_ENV must be one of production, staging/],
    [{ DURABILITY: 'maybe' }, /^DURABILITY must be one of process, power/],
    [{ PUBLIC_BASE_URL: 'not a url' }, /^PUBLIC_BASE_URL must be an absolute URL/],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, /^PUBLIC_BASE_URL must use http: or https:/],
    [{ REDIS_URL: 'http://x' }, /^REDIS_URL must use redis: or rediss:/],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL must be a file path, a sqlite: URL or a postgres:\/\/ URL/],
    [{ TRUST_PROXY: 'everyone' }, /^TRUST_PROXY/],
    [{ BOOTSTRAP_KEY: 'perhaps' }, /^BOOTSTRAP_KEY must be true or false/],
    [{ REDIS_FAILURE_POLICY: 'maybe' }, /^REDIS_FAILURE_POLICY/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL/],
    [{ SHUTDOWN_DRAIN_MS: '5s' }, /^SHUTDOWN_DRAIN_MS must be an integer from 0 to 300000/],
  ]
  for (const [env, message] of cases) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
      JSON.stringify(env),
    )
  }
})

// Regression: these passed validation and then Fastify (proxy-addr) failed the start with
// "invalid range on address", naming no variable.
test('a TRUST_PROXY entry that is no address or CIDR stops start-up naming TRUST_PROXY and the entry', () => {
  for (const entry of ['999.1.1.1', '10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/x', '10.0.0.0/8/8', '127.1', 'true']) {
    assert.throws(
      () => loadConfig({ TRUST_PROXY: `127.0.0.1, ${entry}` }),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message.startsWith('TRUST_PROXY') &&
        e.message.includes(JSON.stringify(entry)) &&
        !e.message.includes('\n'),
      entry,
    )
  }
})

test('TRUST_PROXY refuses a range holding every peer: any client could forge its address', () => {
  for (const entry of ['0.0.0.0/0', '::/0', '203.0.113.7/0', '::ffff:0:0/96', '0:0:0:0:0:ffff:0.0.0.0/96']) {
    assert.throws(
      () => loadConfig({ TRUST_PROXY: entry }),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message.startsWith(`TRUST_PROXY entry ${JSON.stringify(entry)} trusts every peer`) &&
        /forge/.test(e.message),
      entry,
    )
  }
})

test('accepted forms of DATABASE_URL and TRUST_PROXY', () => {
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).databaseUrl, 'postgres://u@h/db')
  assert.equal(loadConfig({ DATABASE_URL: 'sqlite:///tmp/x.db' }).databaseUrl, 'sqlite:///tmp/x.db')
  assert.equal(loadConfig({ DATABASE_URL: '/tmp/x.db' }).databaseUrl, '/tmp/x.db')
  assert.throws(() => loadConfig({ TRUST_PROXY: '2' }), /hop counts are not supported/)
  assert.equal(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy, '10.0.0.0/8,127.0.0.1')
  const every = 'loopback,linklocal,uniquelocal,10.1.2.3,10.0.0.0/8,10.1.2.3/32,1.0.0.0/1,::1,2001:db8::/32,::ffff:10.0.0.0/104'
  assert.equal(loadConfig({ TRUST_PROXY: every }).trustProxy, every)
  assert.doesNotThrow(() => Fastify({ trustProxy: every }), 'and Fastify takes it')
  assert.equal(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl, 'https://api.example.com')
})

test('DATABASE_LISTEN_URL: DATABASE_URL by default, a direct postgres:// URL, or off; PostgreSQL only', () => {
  const pg = 'postgres://u@pgbouncer:6432/db'
  assert.equal(loadConfig({ DATABASE_URL: pg }).databaseListenUrl, undefined)
  assert.equal(
    loadConfig({ DATABASE_URL: pg, DATABASE_LISTEN_URL: 'postgres://u@primary:5432/db' }).databaseListenUrl,
    'postgres://u@primary:5432/db',
  )
  assert.equal(loadConfig({ DATABASE_URL: pg, DATABASE_LISTEN_URL: 'off' }).databaseListenUrl, 'off')
  assert.throws(
    () => loadConfig({ DATABASE_URL: pg, DATABASE_LISTEN_URL: 'redis://x' }),
    /DATABASE_LISTEN_URL must be a postgres:\/\/ URL or off/,
  )
  assert.throws(() => loadConfig({ DATABASE_LISTEN_URL: 'postgres://u@h/db' }), /DATABASE_LISTEN_URL applies to PostgreSQL only/)
})

test('REDIS_URL: one server, a Redis Cluster or Sentinels, with a clear message for a bad one', () => {
  assert.deepEqual(redisTarget('redis://127.0.0.1:6379'), { mode: 'single', url: 'redis://127.0.0.1:6379' })
  assert.deepEqual(redisTarget('redis+cluster://10.0.0.1:7000,10.0.0.2:7000'), {
    mode: 'cluster',
    nodes: [
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7000 },
    ],
    tls: false,
  })
  assert.deepEqual(redisTarget('rediss+cluster://app:p%40ss@[::1]:7000'), {
    mode: 'cluster',
    nodes: [{ host: '::1', port: 7000 }],
    tls: true,
    username: 'app',
    password: 'p@ss',
  })
  assert.deepEqual(redisTarget('redis+sentinel://:pw@s1:26379,s2:26379/mymaster'), {
    mode: 'sentinel',
    sentinels: [
      { host: 's1', port: 26379 },
      { host: 's2', port: 26379 },
    ],
    masterName: 'mymaster',
    tls: false,
    password: 'pw',
  })
  assert.equal(loadConfig({ REDIS_URL: 'redis+cluster://h:1,h:2' }).redisUrl, 'redis+cluster://h:1,h:2')
  const bad: [string, RegExp][] = [
    ['redis+cluster://h', /REDIS_URL must be redis\+cluster:\/\/host:port,host:port,…: "h" is not host:port/],
    ['redis+cluster://h:1,h:70000', /"h:70000" is not host:port/],
    ['redis+cluster://h:1/0', /a cluster URL has no path/],
    ['redis+sentinel://h:26379', /name the master the Sentinels watch/],
    ['http://h:1', /REDIS_URL must use redis: or rediss:.*redis\+cluster:\/\/.*redis\+sentinel:\/\//],
  ]
  for (const [raw, message] of bad) {
    assert.throws(
      () => loadConfig({ REDIS_URL: raw }),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
      raw,
    )
  }
})

test('the limiter state file: beside a SQLite file by default, nowhere without one, off on request', () => {
  assert.equal(loadConfig({}).limiterStateFile, 'data/animal-store.db.limits.json')
  assert.equal(loadConfig({ DATABASE_URL: 'sqlite:///srv/as/x.db' }).limiterStateFile, '/srv/as/x.db.limits.json')
  assert.equal(loadConfig({ DATABASE_URL: ':memory:' }).limiterStateFile, undefined)
  assert.equal(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).limiterStateFile, undefined)
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).limiterStateFile, undefined)
  assert.equal(
    loadConfig({ DATABASE_URL: 'postgres://u@h/db', LIMITER_STATE_FILE: '/var/lib/as/limits.json' }).limiterStateFile,
    '/var/lib/as/limits.json',
  )
  assert.equal(loadConfig({ LIMITER_STATE_FILE: 'off' }).limiterStateFile, undefined)
  assert.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).limiterStateFile, undefined, 'Redis keeps the state')
  assert.throws(
    () => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', LIMITER_STATE_FILE: '/tmp/x.json' }),
    (e: unknown) => e instanceof ConfigError && /^LIMITER_STATE_FILE applies to the in-memory limiter only/.test(e.message),
  )
  assert.equal(loadConfig({}).limiterSnapshotMs, 2000)
  assert.equal(loadConfig({ LIMITER_SNAPSHOT_MS: '500' }).limiterSnapshotMs, 500)
  for (const bad of ['0', '99', '600001', '2s', '-1']) {
    assert.throws(() => loadConfig({ LIMITER_SNAPSHOT_MS: bad }), /LIMITER_SNAPSHOT_MS must be an integer from 100 to 600000/, bad)
  }
  assert.equal(loadConfig({}).lastUsedFlushMs, 5000)
  assert.equal(loadConfig({ LAST_USED_FLUSH_MS: '250' }).lastUsedFlushMs, 250)
  for (const bad of ['0', '99', '600001', '5s']) {
    assert.throws(() => loadConfig({ LAST_USED_FLUSH_MS: bad }), /LAST_USED_FLUSH_MS must be an integer from 100 to 600000/, bad)
  }
})

test("the variables a child service must not inherit are exactly the schema's, which are the ones loadConfig reads", () => {
  // The process tests, the soak and the benchmark strip CONFIG_VARS from a child's environment, so
  // that a developer's shell cannot change what a test runs; a variable missing from it would leak.
  assert.deepEqual([...CONFIG_VARS].sort(), [...CONFIG_VARIABLES, CONFIG_FILE_VARIABLE].sort(), 'tools/service-env.mjs CONFIG_VARS')
  const read = new Set<string>()
  const recording = (env: Record<string, string>) =>
    new Proxy(env as Record<string, string | undefined>, {
      get: (target, name) => (typeof name === 'string' ? (read.add(name), target[name]) : undefined),
    })
  loadConfig(recording({}))
  loadConfig(
    recording({ ANIMAL_STORE_ENV: 'staging', DATABASE_URL: 'postgres://u@h/db', REDIS_URL: 'redis://h', TRUST_PROXY: '10.0.0.0/8' }),
  )
  assert.deepEqual([...read].sort(), [...CONFIG_VARIABLES].sort())
})

test('the admin listener: 8081 on 127.0.0.1 by default; ADMIN_PORT (0: a free port) with ADMIN_HOST; off', () => {
  assert.deepEqual([loadConfig({}).adminPort, loadConfig({}).adminHost], [8081, '127.0.0.1'])
  const c = loadConfig({ ADMIN_PORT: '9090' })
  assert.deepEqual([c.adminPort, c.adminHost], [9090, '127.0.0.1'])
  assert.equal(loadConfig({ ADMIN_PORT: '9090', ADMIN_HOST: '::1' }).adminHost, '::1')
  assert.equal(loadConfig({ ADMIN_HOST: '::1' }).adminHost, '::1')
  assert.equal(loadConfig({ ADMIN_PORT: '0', PORT: '0' }).adminPort, 0, 'both on free ports')
  assert.equal(loadConfig({ ADMIN_PORT: 'off' }).adminPort, undefined)
  for (const [env, message] of [
    [{ ADMIN_PORT: 'x' }, /^ADMIN_PORT must be an integer from 0 to 65535 or off/],
    [{ ADMIN_PORT: 'OFF' }, /^ADMIN_PORT must be an integer from 0 to 65535 or off/],
    [{ ADMIN_PORT: '65536' }, /^ADMIN_PORT must be an integer from 0 to 65535/],
    [{ ADMIN_PORT: '8080' }, /^ADMIN_PORT must differ from PORT/],
    [{ PORT: '8081' }, /^ADMIN_PORT must differ from PORT \(both 8081\)/],
    [{ ADMIN_PORT: 'off', ADMIN_HOST: '10.0.0.1' }, /^ADMIN_HOST has no effect with ADMIN_PORT=off/],
    [{ ADMIN_PORT: '9090', ADMIN_HOST: 'not a host' }, /^ADMIN_HOST must be an IP address or a host name/],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
      JSON.stringify(env),
    )
  }
})

test('the reference table in docs/configuration.md is the one the variables generate', async () => {
  const generated = (await generateConfigurationDoc()) as string
  assert.ok(
    generated === (await readFile(CONFIGURATION_MD, 'utf8')),
    'docs/configuration.md is stale: the variables in src/config/variables.ts changed. Run `npm run config:generate` and commit it',
  )
  for (const name of CONFIG_VARIABLES) assert.ok(generated.includes(`| \`${name}\` |`), name)
})

// Issue 43: the README said HOST defaulted to 0.0.0.0 (it is 127.0.0.1), and a newcomer in a
// container could not reach the service. Its defaults are generated from the declarations now.
test('the README’s table of the most used variables is the one the variables generate, HOST’s default among them', async () => {
  const generated = (await generateReadme()) as string
  const readme = await readFile(README_MD, 'utf8')
  assert.ok(
    generated === readme,
    'README.md is stale: the variables in src/config/variables.ts changed. Run `npm run config:generate` and commit it',
  )
  assert.match(readme, /^\| `HOST` \| `127\.0\.0\.1` \|$/m)
  assert.match(readme, /`HOST=0\.0\.0\.0`/, 'the README says what a container sets')
})

// Issue 32: the quick start listens on loopback only (Fastify's own default, like ADMIN_HOST);
// containers and deployments set HOST=0.0.0.0 (docs/configuration.md says why).
test('HOST defaults to 127.0.0.1; HOST=0.0.0.0 listens on all interfaces', () => {
  assert.equal(loadConfig({}).host, '127.0.0.1')
  assert.equal(loadConfig({ HOST: '0.0.0.0' }).host, '0.0.0.0')
})
