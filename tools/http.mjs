// Small HTTP helpers (loopback only): free ports, readiness, and capturing exact responses.
import http from 'node:http'
import net from 'node:net'

/** A port that was free a moment ago on `host`: listen on port 0, read the port, close. */
export function freePort(host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once('error', reject)
    server.listen({ port: 0, host, exclusive: true }, () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** The Authorization header for an API key. */
export const bearer = (key) => ({ authorization: `Bearer ${key}` })

/** One request; resolves with status, raw header pairs (order and case kept) and the body. */
export function request(port, { method = 'GET', path, headers = {}, body }, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const pairs = []
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i], res.rawHeaders[i + 1]])
        resolve({ status: res.statusCode, headers: pairs, body: Buffer.concat(chunks) })
      })
    })
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * Polls GET `path` (default /healthz) on 127.0.0.1:`port` until it answers 200. Rejects if `child`
 * (`exited`: a promise of { code, signal }; `err`, `out`: its output so far) exits first, or after
 * `timeoutMs`; the message ends with the last `outputLines` lines of its stderr (else stdout).
 */
export async function waitHealthy(port, child, { timeoutMs = 30_000, path = '/healthz', outputLines = 5 } = {}) {
  const deadline = Date.now() + timeoutMs
  let exited = null
  child.exited.then((r) => (exited = r))
  const output = () => (child.err || child.out).trim().split('\n').slice(-outputLines).join('\n') || 'no output'
  while (Date.now() < deadline) {
    if (exited)
      throw new Error(`exited (code ${exited.code}${exited.signal ? `, ${exited.signal}` : ''}) before ready on ${path}:\n${output()}`)
    try {
      const r = await request(port, { path }, 1000)
      if (r.status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`not ready on ${path} within ${timeoutMs} ms:\n${output()}`)
}

/** Bytes of a response on the wire, minus the Date/Connection/Keep-Alive lines Node adds to both servers. */
export function wireSize(captured) {
  let n = `HTTP/1.1 ${captured.status} X\r\n`.length
  for (const [k, v] of captured.headers) {
    if (['date', 'connection', 'keep-alive'].includes(k.toLowerCase())) continue
    n += k.length + 2 + Buffer.byteLength(v) + 2
  }
  return n + 2 + captured.body.length
}
