// Every child process the benchmark starts goes through here, so that all of them are ended at the
// end of the run, on an error, on SIGINT/SIGTERM and at the hard deadline. Nothing is killed by name.
import { spawn } from 'node:child_process'

const live = new Set()
const cleanups = []
let shuttingDown = false

/** This process's environment without what would change how a child Node runs (coverage, preloads). */
export function childEnv() {
  const env = { ...process.env }
  delete env.NODE_V8_COVERAGE
  delete env.NODE_OPTIONS
  return env
}

/** Spawns a tracked child; stdout/stderr are kept (last 64 kB each) for error messages. */
export function start(command, args, options = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv(), ...options })
  child.out = ''
  child.err = ''
  const keep = (field) => (chunk) => {
    child[field] += chunk
    if (child[field].length > 65536) child[field] = child[field].slice(-65536)
  }
  child.stdout?.setEncoding('utf8').on('data', keep('out'))
  child.stderr?.setEncoding('utf8').on('data', keep('err'))
  child.exited = new Promise((resolve) => {
    child.once('close', (code, signal) => {
      live.delete(child)
      resolve({ code, signal })
    })
    child.once('error', (error) => {
      live.delete(child)
      child.err += `\n${error.message}`
      resolve({ code: -1, signal: null, error })
    })
  })
  live.add(child)
  return child
}

/** Runs a tracked child to its end, killing it after `timeoutMs`. */
export async function run(command, args, { timeoutMs = 60_000, ...options } = {}) {
  const child = start(command, args, options)
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const result = await child.exited
  clearTimeout(timer)
  return { ...result, stdout: child.out, stderr: child.err, timedOut: result.signal === 'SIGKILL' }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child is gone. */
export async function stop(child, graceMs = 12_000) {
  child.stopping = true
  if (!live.has(child)) return child.exited
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  const result = await child.exited
  clearTimeout(timer)
  return result
}

/** Registers a cleanup step (temp dir, PostgreSQL database) run once at the end, also on abort. */
export function onCleanup(fn) {
  cleanups.push(fn)
}

export async function shutdown() {
  if (shuttingDown) return
  shuttingDown = true
  await Promise.all([...live].map((c) => stop(c, 3000)))
  for (const fn of cleanups.reverse()) {
    try {
      await fn()
    } catch (error) {
      process.stderr.write(`bench: cleanup step failed: ${error.message}\n`)
    }
  }
}

/** Installs the handlers: signals, fatal errors, the hard deadline, and a last SIGKILL on exit. */
export function installGuards(deadlineMs, beforeExit = async () => {}) {
  const abort = async (why, code) => {
    process.stderr.write(`\nbench: ${why}; stopping every child process\n`)
    await shutdown()
    try {
      await beforeExit(why)
    } catch (error) {
      process.stderr.write(`bench: could not write partial results: ${error.message}\n`)
    }
    process.exit(code)
  }
  process.once('SIGINT', () => abort('SIGINT', 130))
  process.once('SIGTERM', () => abort('SIGTERM', 143))
  process.on('uncaughtException', (error) => abort(`uncaught error: ${error.stack ?? error}`, 1))
  process.on('unhandledRejection', (error) => abort(`unhandled rejection: ${error?.stack ?? error}`, 1))
  setTimeout(() => abort(`hard deadline of ${Math.round(deadlineMs / 60000)} min reached`, 1), deadlineMs).unref()
  process.on('exit', () => {
    for (const child of live) {
      try {
        child.kill('SIGKILL')
      } catch {
        // already gone
      }
    }
  })
}
