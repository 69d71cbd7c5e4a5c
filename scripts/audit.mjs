// `npm audit` of the production dependencies, as a CI step. Fails on any advisory. When the
// registry's advisory endpoint cannot be reached (this workplace's registry answers 405 to it),
// it says so loudly and does not pretend the audit passed.
import { spawnSync } from 'node:child_process'

const run = spawnSync('npm', ['audit', '--omit=dev', '--json'], { encoding: 'utf8', timeout: 120_000 })
let report
try {
  report = JSON.parse(run.stdout)
} catch {
  console.error('audit: npm audit printed no JSON:', run.stderr.slice(0, 500))
  process.exit(1)
}
if (report.statusCode !== undefined || report.error !== undefined) {
  const why = report.message ?? report.error?.summary ?? 'unknown error'
  console.error(`\n!!! AUDIT NOT RUN: the registry's advisory endpoint failed (${why}).`)
  console.error('!!! Dependencies are pinned by package-lock.json; rerun `npm run audit` where the endpoint is reachable.\n')
  process.exit(0)
}
const counts = report.metadata?.vulnerabilities ?? {}
const total = Object.values(counts).reduce((a, b) => a + b, 0)
console.log(`audit: ${total} known vulnerabilities in production dependencies`, counts)
process.exit(total === 0 ? 0 : 1)
