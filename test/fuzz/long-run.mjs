#!/usr/bin/env node
/**
 * The long HTTP fuzz run (npm run fuzz = node --import tsx test/fuzz/long-run.mjs): the properties of
 * test/fuzz/http-fuzz.test.ts with many more cases, against the app and the admin API, each on a
 * loopback port of its own.
 *
 *   FUZZ_RUNS=5000      cases per property (the concurrency property runs a tenth, the idempotency and sunset ones a fifth)
 *   FUZZ_SEED, FUZZ_PATH  replay a failure (printed with it)
 *   FUZZ_ONLY=abuse     only the property named so before its colon, else those whose name contains this text
 *   FUZZ_COLLECT=1      do not stop at the first failure: run everything, print each kind of problem once
 *   FUZZ_REQUEST_TIMEOUT_MS=5000  per request; no answer in time counts as a hang
 *
 * Prints the cases run, the statuses seen and every failure with its fast-check seed and path;
 * exits 1 when anything failed.
 */
const { FuzzServer, FuzzStats, PROPERTIES, SUNSET_PROPERTY, SUNSET_NOW, runProperty } = await import('./runner.ts')

const RUNS = Number(process.env.FUZZ_RUNS ?? 5000)
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : undefined
const PATH = process.env.FUZZ_PATH
const ONLY = process.env.FUZZ_ONLY
const COLLECT = process.env.FUZZ_COLLECT === '1'
const FACTOR = { concurrency: 0.1, idempotency: 0.2, store: 0.2, sunset: 0.2 }

const all = [...PROPERTIES.map((p) => ({ prop: p, sunset: false })), { prop: SUNSET_PROPERTY, sunset: true }]
// A name's first word(s), before the colon, select that property alone (admin, not admin lifecycle).
const prefixOf = (prop) => prop.name.split(':')[0]
const exact = all.some(({ prop }) => prefixOf(prop) === ONLY)
const plan = all.filter(({ prop }) => ONLY === undefined || (exact ? prefixOf(prop) === ONLY : prop.name.includes(ONLY)))

let failed = false
let totalCases = 0
const started = Date.now()
const allStatuses = {}
console.log(
  `HTTP fuzz: ${RUNS} runs per property${SEED !== undefined ? `, seed ${SEED}` : ''}${PATH ? `, path ${PATH}` : ''}${COLLECT ? ', collect mode' : ''}`,
)

for (const { prop, sunset } of plan) {
  const server = await FuzzServer.start(sunset ? { now: SUNSET_NOW } : {})
  const stats = new FuzzStats()
  stats.collect = COLLECT
  const factor = Object.entries(FACTOR).find(([k]) => prop.name.startsWith(k))?.[1] ?? 1
  const numRuns = Math.max(1, Math.round(RUNS * factor))
  const t0 = Date.now()
  let result
  try {
    result = await runProperty(prop, server, stats, { numRuns, seed: SEED, path: PATH })
  } catch (error) {
    result = { name: prop.name, numRuns: 0, failed: true, seed: SEED ?? NaN, error: `the run itself failed: ${error?.stack ?? error}` }
  }
  try {
    await server.assertAlive()
  } catch (error) {
    result.failed = true
    result.error = `${result.error ?? ''}\nthe server no longer answers /healthz: ${error.message}`
  }
  await server.close()
  const seconds = ((Date.now() - t0) / 1000).toFixed(1)
  totalCases += stats.cases
  console.log(`\n== ${prop.name}`)
  console.log(`   ${result.numRuns} runs, ${stats.cases} requests judged, ${seconds} s`)
  const byStatus = stats.byStatus()
  for (const [s, n] of Object.entries(byStatus)) allStatuses[s] = (allStatuses[s] ?? 0) + n
  console.log(
    `   statuses: ${Object.entries(byStatus)
      .sort()
      .map(([s, n]) => `${s}×${n}`)
      .join(' ')}`,
  )
  const labels = [...stats.statuses].sort((a, b) => b[1] - a[1])
  console.log(
    `   answers: ${labels
      .slice(0, 40)
      .map(([l, n]) => `${l} ×${n}`)
      .join('; ')}${labels.length > 40 ? `; … ${labels.length - 40} more` : ''}`,
  )
  if (result.failed) {
    failed = true
    console.log(`   FAILED: seed ${result.seed}, path ${result.path ?? '-'}`)
    console.log(`   replay: FUZZ_SEED=${result.seed} FUZZ_PATH=${result.path ?? ''} FUZZ_ONLY='${prop.name.split(':')[0]}' npm run fuzz`)
    if (result.counterexample) console.log(`   counterexample: ${result.counterexample.slice(0, 3000)}`)
    if (result.error) console.log(`   error: ${result.error.split('\n').join('\n          ')}`)
  }
  if (stats.problems.size > 0) {
    failed = true
    console.log(`   ${stats.problems.size} kinds of problem (collect mode):`)
    for (const [kind, { count, example }] of [...stats.problems].sort((a, b) => b[1].count - a[1].count)) {
      console.log(`   - ×${count} ${kind}\n       ${example.split('\n').slice(0, 6).join('\n       ').slice(0, 1200)}`)
    }
  }
}

console.log(
  `\nTotal: ${totalCases} requests judged in ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${Object.entries(allStatuses)
    .sort()
    .map(([s, n]) => `${s}×${n}`)
    .join(' ')}`,
)
console.log(failed ? 'FUZZ FAILED' : 'FUZZ PASSED')
process.exit(failed ? 1 : 0)
