// The benchmark's --service-node-flags: node flags for the service processes it starts (to measure
// what a V8 setting costs), checked as flags so that nothing else reaches the command line.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'

/** parseOptions() of bench/lib/options.mjs for these arguments, in a process of its own (it reads argv). */
function parse(...args: string[]) {
  const run = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const { parseOptions } = await import('./bench/lib/options.mjs'); process.stdout.write(JSON.stringify(parseOptions().serviceNodeFlags))",
      '--',
      ...args,
    ],
    { encoding: 'utf8', timeout: 30_000 },
  )
  return { status: run.status, flags: run.status === 0 ? (JSON.parse(run.stdout) as string[]) : undefined, stderr: run.stderr }
}

test('--service-node-flags takes a comma list of node flags, none by default', () => {
  assert.deepEqual(parse().flags, [])
  assert.deepEqual(parse('--service-node-flags=--max-semi-space-size=4,--no-opt').flags, ['--max-semi-space-size=4', '--no-opt'])
})

test('--service-node-flags refuses what is not a flag', () => {
  for (const bad of ['max-semi-space-size=4', '--max-semi-space-size=4;rm -rf x', '--a b', '--x=$(id)']) {
    const { status, stderr } = parse(`--service-node-flags=${bad}`)
    assert.notEqual(status, 0, bad)
    assert.match(stderr, /--service-node-flags: .* is not a flag/, bad)
  }
})
