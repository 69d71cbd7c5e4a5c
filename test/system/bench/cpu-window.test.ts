// The benchmark's CPU accounting (tools/proc.mjs): what a round charges to each group of the
// benchmark's own processes, and what it calls interference. Regression: a PostgreSQL backend that
// the peer's pool opened in the middle of a round was not in its group's pid list (read when the
// round started), so its CPU counted as another process's and voided every PostgreSQL round.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { test } from 'node:test'
import { startCpuWindow } from '../../../tools/proc.mjs'

/** A process that spins the CPU for `ms`, then exits when told (stdin closed). */
function spinner(ms: number) {
  const child = spawn(
    process.execPath,
    ['-e', `const end = Date.now() + ${ms}; while (Date.now() < end); process.stdout.write('done\\n'); process.stdin.resume()`],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  const done = once(child.stdout!, 'data')
  return { child, done, stop: () => child.stdin!.end() }
}

test('a process of a group that starts during the window is charged to the group, whole', async (t) => {
  const members: number[] = []
  const window = startCpuWindow({ born: () => members })
  const spin = spinner(600)
  t.after(() => spin.child.kill('SIGKILL'))
  members.push(spin.child.pid!)
  await spin.done
  const cpu = window.end()
  spin.stop()
  await once(spin.child, 'exit')
  // 600 ms of spinning, plus node's start, in a window only a little longer: well over a tenth of a
  // core whatever the machine; not counted at all before the fix.
  assert.ok((cpu.groupsPct.born ?? 0) >= 10, `charged to the group: ${cpu.groupsPct.born}% of a core over ${cpu.seconds} s`)
})

test('a process that already ran before the window is charged only what it spends inside it', async (t) => {
  const spin = spinner(400)
  t.after(() => spin.child.kill('SIGKILL'))
  await spin.done
  // It has spun for 400 ms and now waits on stdin: a window opened now sees it idle.
  const window = startCpuWindow({ old: () => [spin.child.pid!] })
  await new Promise((resolve) => setTimeout(resolve, 300))
  const cpu = window.end()
  spin.stop()
  await once(spin.child, 'exit')
  assert.ok((cpu.groupsPct.old ?? 0) < 10, `an idle process is charged ${cpu.groupsPct.old}% of a core`)
})
