/**
 * Hostile HTTP clients, run in their own process (so their work does not delay the timing of the
 * load loop in the test process). Used by test/system/http/slow-clients.test.ts and
 * bench/connection-flood.mjs; plain ESM, no build needed.
 *
 *   HOSTILE='{"port":8080,"key":"as_live_...","slowloris":50,"idle":500,"neverReading":1}' node hostile-clients.mjs
 *
 * - slowloris:    sockets that send a request line and then one header line per second, forever;
 * - idle:         sockets that connect and send nothing;
 * - neverReading: sockets that pipeline GET /v1/pets?limit=100 as fast as the socket takes them
 *                 (at most `pipelineCap` requests per socket) and never read a byte.
 * Every socket the server closes is opened again, so the pressure is constant. To `host` (default
 * 127.0.0.1; another address of this machine or of its network namespace), from the local address
 * `from` (default the kernel's choice; any 127.x.y.z works), or from each of a list of addresses in
 * turn (the i-th socket from the i-th modulo their count; a reopened socket from the same address).
 * With `paused: true` nothing is opened until SIGUSR1; SIGUSR1 opens all the sockets (again),
 * SIGUSR2 destroys them all and stops reopening (so a test can alternate quiet and hostile periods).
 * Prints one JSON line of counters every second (and on SIGUSR1/SIGUSR2); exits on SIGTERM/SIGINT,
 * or after `maxSeconds`.
 */
import net from 'node:net'

const config = {
  host: '127.0.0.1',
  from: undefined,
  slowloris: 0,
  idle: 0,
  neverReading: 0,
  pipelineCap: 100_000,
  maxSeconds: 60,
  paused: false,
  ...JSON.parse(process.env.HOSTILE ?? '{}'),
}
if (!config.port) throw new Error('HOSTILE.port is required')

const stats = {
  slowlorisOpened: 0,
  slowlorisClosed: 0,
  slowloris408: 0,
  idleOpened: 0,
  idleClosed: 0,
  idle408: 0,
  neverReadingOpened: 0,
  neverReadingClosed: 0,
  neverReadingRequestsWritten: 0,
  connectErrors: 0,
  /** Sockets connected now (`open` counts those still connecting too). */
  connected: 0,
}
let stopping = false
let active = false
let generation = 0
const sockets = new Set()

const sources = config.from === undefined ? [undefined] : [config.from].flat()

function open(kind, onConnect, slot) {
  if (stopping || !active) return
  const born = generation
  const from = sources[slot % sources.length]
  const socket = net.connect({ port: config.port, host: config.host, ...(from === undefined ? {} : { localAddress: from }) })
  sockets.add(socket)
  stats[`${kind}Opened`]++
  let timer
  let head = ''
  socket.on('connect', () => {
    socket.wasConnected = true
    stats.connected++
    timer = onConnect(socket)
  })
  if (kind !== 'neverReading') {
    socket.on('data', (d) => {
      if (head.length < 64) head += d.toString('latin1')
    })
  }
  socket.on('error', (error) => {
    if (error.code === 'ECONNREFUSED' || error.code === 'EADDRNOTAVAIL') stats.connectErrors++
  })
  socket.on('close', () => {
    clearInterval(timer)
    sockets.delete(socket)
    if (socket.wasConnected) stats.connected--
    if (socket.closedByUs) return
    stats[`${kind}Closed`]++ // closed by the server
    if (head.startsWith('HTTP/1.1 408')) stats[`${kind}408`]++
    // Open a replacement, a little later so a refusing server is not hammered.
    setTimeout(() => born === generation && open(kind, onConnect, slot), 50).unref()
  })
}

const slowloris = (socket) => {
  socket.write(`GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\n`)
  let n = 0
  return setInterval(() => socket.write(`X-Slow-${n++}: ${'a'.repeat(20)}\r\n`), 1000)
}

const idle = () => undefined

const neverReading = (socket) => {
  socket.pause() // never read: the responses pile up in the kernel buffers, then in the server
  const request = `GET /v1/pets?limit=100 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${config.key}\r\n\r\n`
  let written = 0
  const pump = () => {
    while (written < config.pipelineCap && !socket.destroyed) {
      written++
      stats.neverReadingRequestsWritten++
      if (!socket.write(request)) {
        socket.once('drain', pump)
        return
      }
    }
  }
  pump()
  return undefined
}

const print = () => process.stdout.write(JSON.stringify({ ...stats, open: sockets.size, active }) + '\n')

function activate() {
  if (active || stopping) return
  active = true
  for (let i = 0; i < config.slowloris; i++) open('slowloris', slowloris, i)
  for (let i = 0; i < config.idle; i++) open('idle', idle, i)
  for (let i = 0; i < config.neverReading; i++) open('neverReading', neverReading, i)
  print()
}

function deactivate() {
  active = false
  generation++
  for (const socket of sockets) {
    socket.closedByUs = true
    socket.destroy()
  }
  print()
}

if (!config.paused) activate()
process.on('SIGUSR1', activate)
process.on('SIGUSR2', deactivate)

const report = setInterval(print, 1000)
print() // the signal handlers are installed: ready

function stop() {
  if (stopping) return
  stopping = true
  clearInterval(report)
  for (const socket of sockets) {
    socket.closedByUs = true
    socket.destroy()
  }
  process.stdout.write(JSON.stringify({ ...stats, open: 0, final: true }) + '\n')
  setTimeout(() => process.exit(0), 50)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
setTimeout(stop, config.maxSeconds * 1000).unref()
