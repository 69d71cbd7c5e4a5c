// What the benchmark needs of the machine, and what it records of it.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { DIST, ROOT } from './service.mjs'

/** Exits (status 2) naming what is missing: the build, wrk, taskset, a second CPU. */
export function preflight() {
  const problems = []
  if (!existsSync(join(DIST, 'server.js'))) problems.push('dist/server.js is missing: run `npm run build` first')
  if (!existsSync(join(DIST, 'storage/sqlite/migrations')))
    problems.push('dist/storage/sqlite/migrations is missing: run `npm run build` (it copies the SQL migrations)')
  if (spawnSync('wrk', ['-v']).error) problems.push('wrk is not installed: apt-get install -y wrk')
  if (spawnSync('taskset', ['-V']).error) problems.push('taskset is not installed (util-linux)')
  if (os.cpus().length < 2) problems.push('needs at least 2 CPUs (server on CPU 1, load on CPU 0)')
  if (problems.length) {
    process.stderr.write(`bench: cannot run:\n  - ${problems.join('\n  - ')}\n`)
    process.exit(2)
  }
}

/** The machine, the tools and the commit the results were measured on (`tmp`: the temp dir's filesystem). */
export function machineInfo(tmp) {
  const wrkOut = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
  const cpuModel = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model
  const sh = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    } catch {
      return null
    }
  }
  const df = sh('df', ['-T', tmp])?.split('\n')[1]?.split(/\s+/)
  return {
    node: process.version,
    cpuModel,
    cpus: os.cpus().length,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    kernel: `${os.type()} ${os.release()}`,
    wrk: ((wrkOut.stdout || '') + (wrkOut.stderr || ''))
      .split('\n')[0]
      .replace(/\s*Copyright.*$/, '')
      .trim(),
    tmpFilesystem: df ? { device: df[0], type: df[1] } : null,
    gitCommit: sh('git', ['rev-parse', '--short', 'HEAD']),
    gitDirty: (sh('git', ['status', '--porcelain', '--', 'src']) ?? '') !== '',
  }
}
