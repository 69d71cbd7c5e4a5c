/**
 * What `npm start` runs (`exec node bin/npm-start.mjs`): the server as a child process, and the one
 * stop signal passed on to it. Supervisors run `node dist/server.js` itself (docs/operations.md).
 *
 * npm passes SIGTERM/SIGINT on to the shell it runs a script in, and `sh -c` (dash) neither execs
 * its command nor passes signals on: SIGTERM killed the shell and left the server running without
 * a parent; SIGINT did nothing. `exec` puts this process in the shell's place, so npm signals it.
 *
 * The server runs in a session of its own, out of reach of the terminal's process-group signals:
 * Ctrl-C (or a signal to the whole group) reaches npm and this process, and npm passes it on here
 * too; only the first is passed to the server, which drains, closes and exits, then this process
 * with its status. A second signal to a draining server would stop it at once (close-with-grace).
 *
 * SIGKILL cannot be passed on. The server is joined to this process by an IPC channel, which the
 * kernel closes when this process ends however it ends: the server then stops (src/server.ts). npm
 * killed alone leaves this process to init, so it watches its parent and ends when npm has.
 *
 * The server's heap is bounded here (MAX_HEAP_MB, read from the configuration as the server reads
 * it: src/lifecycle/heap-bound.ts), since a process's heap is sized when it starts.
 *
 * Plain JavaScript outside src/: it is the launcher, not part of the service, and needs no build
 * of its own (it runs the built server, dist/server.js).
 */
import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import { fileURLToPath } from 'node:url'

const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT']
/** How often the parent (npm) is looked for: the most a server outlives a killed npm, before it stops. */
const PARENT_CHECK_MS = 500

/**
 * The node flags of the server's heap bound. None when the configuration cannot be read (or the
 * server is not built): the server then says why, in its own words.
 */
async function heapBound() {
  try {
    const { loadConfiguration, takeConfigFileOption } = await import('../dist/config/config-file.js')
    const { heapBoundFlags } = await import('../dist/lifecycle/heap-bound.js')
    const { configFile } = takeConfigFileOption(process.argv.slice(2))
    return heapBoundFlags(loadConfiguration({ configFile }).config.maxHeapMb)
  } catch {
    return []
  }
}

const server = spawn(
  process.execPath,
  [...process.execArgv, ...(await heapBound()), fileURLToPath(new URL('../dist/server.js', import.meta.url)), ...process.argv.slice(2)],
  {
    // Not stdin: the server never reads it, and it is not in the terminal's foreground group.
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  },
)

let stopping = false
for (const signal of STOP_SIGNALS) {
  process.on(signal, () => {
    if (stopping) return
    stopping = true
    server.kill(signal)
  })
}

// A process whose parent ends is given to init (or a subreaper): its parent pid changes.
const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) process.exit(1)
}, PARENT_CHECK_MS).unref()

server.once('error', (error) => {
  process.stderr.write(`animal-store: cannot start the server: ${error.message}\n`)
  process.exit(1)
})
server.once('exit', (code, signal) => process.exit(code ?? 128 + (signal === null ? 0 : constants.signals[signal])))
