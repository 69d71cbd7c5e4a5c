/**
 * The one owner of the background jobs (src/daemon/): each job started once, in order, and stopped
 * once, in the reverse order; a stop after a start that failed still stops every job, and a start
 * after a stop starts nothing that no one would stop.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Daemon, type Job } from '../../src/daemon/index.js'

function jobs(names: string[], log: string[], failing?: string): Job[] {
  return names.map((name) => ({
    name,
    start: async () => {
      log.push(`start ${name}`)
      if (name === failing) throw new Error(`${name} cannot start`)
    },
    stop: async () => {
      log.push(`stop ${name}`)
    },
  }))
}

test('starts each job once, in order, and stops them once, in the reverse order', async () => {
  const log: string[] = []
  const daemon = new Daemon(jobs(['poll', 'flush', 'sweep'], log))
  await Promise.all([daemon.start(), daemon.start()])
  await daemon.start()
  assert.deepEqual(log, ['start poll', 'start flush', 'start sweep'])
  await Promise.all([daemon.stop(), daemon.stop()])
  assert.deepEqual(log.slice(3), ['stop sweep', 'stop flush', 'stop poll'])
  await daemon.start()
  assert.equal(log.length, 6, 'nothing starts again after a stop')
})

test('a start that fails rejects, and a stop then stops every job, the ones never started too', async () => {
  const log: string[] = []
  const daemon = new Daemon(jobs(['poll', 'flush', 'sweep'], log, 'flush'))
  await assert.rejects(daemon.start(), /flush cannot start/)
  await daemon.stop()
  assert.deepEqual(log, ['start poll', 'start flush', 'stop sweep', 'stop flush', 'stop poll'])
})

test('a stop before any start starts nothing later', async () => {
  const log: string[] = []
  const daemon = new Daemon(jobs(['poll'], log))
  await daemon.stop()
  await daemon.start()
  assert.deepEqual(log, ['stop poll'])
})
