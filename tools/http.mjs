// Small HTTP helpers (loopback only), for the tests, the benchmark and the soak alike: free ports,
// one request (its exact answer too), readiness.
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

/**
 * @typedef {object} Answer
 * @property {number} status
 * @property {Headers} headers the headers, for reading (`headers.get('retry-after')`)
 * @property {Array<[string, string]>} rawHeaders the headers as sent: every line, its order and case kept
 * @property {Buffer} bytes the body as sent
 * @property {string} text the body as UTF-8 text
 * @property {unknown} body the body parsed when it is JSON, else the text
 */

/** Redirects a GET or HEAD follows, as fetch does. */
const REDIRECTS = new Set([301, 302, 303, 307, 308])

/**
 * One request, on a connection of its own (no pool: what a test or a capture sees is this request's
 * alone), to `target`: a URL, or a port on 127.0.0.1 with `path`. A `body` that is not a string is
 * sent as JSON (content-type application/json unless given). A GET or HEAD follows redirects, as
 * fetch does, unless `redirect` is 'manual'. Rejects with a TimeoutError when no whole answer came
 * within `timeoutMs`, and with the socket's error as `cause` when it failed (ECONNREFUSED …).
 *
 * @param {string | number} target
 * @param {{ method?: string, path?: string, headers?: Record<string, string>, body?: unknown, timeoutMs?: number, redirect?: 'follow' | 'manual' }} [init]
 * @returns {Promise<Answer>}
 */
export async function request(target, init = {}) {
  const { method = 'GET', path = '', body, timeoutMs = 10_000, redirect = 'follow' } = init
  const headers = { ...init.headers }
  let payload
  if (body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body)
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json'
  }
  let url = typeof target === 'number' ? new URL(`http://127.0.0.1:${target}${path}`) : new URL(target)
  const deadline = performance.now() + timeoutMs
  for (let hops = 0; ; hops++) {
    const answer = await requestOnce(method, url, headers, payload, Math.max(1, deadline - performance.now()))
    const location = answer.headers.get('location')
    if (redirect === 'manual' || !REDIRECTS.has(answer.status) || location === null || !['GET', 'HEAD'].includes(method) || hops === 20)
      return answer
    url = new URL(location, url)
  }
}

/**
 * @param {string} method
 * @param {URL} url
 * @param {Record<string, string>} headers
 * @param {string | undefined} payload
 * @param {number} timeoutMs
 * @returns {Promise<Answer>}
 */
function requestOnce(method, url, headers, payload, timeoutMs) {
  return new Promise((resolve, reject) => {
    const what = `${method} ${url.href}`
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('error', (error) => fail(new Error(`${what}: ${error.message}`, { cause: error })))
      res.on('end', () => {
        clearTimeout(timer)
        const rawHeaders = []
        const readable = new Headers()
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          rawHeaders.push([res.rawHeaders[i], res.rawHeaders[i + 1]])
          readable.append(res.rawHeaders[i], res.rawHeaders[i + 1])
        }
        const bytes = Buffer.concat(chunks)
        const text = bytes.toString('utf8')
        let parsed = text
        try {
          parsed = JSON.parse(text)
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: readable, rawHeaders, bytes, text, body: parsed })
      })
    })
    const fail = (error) => {
      clearTimeout(timer)
      req.destroy()
      reject(error)
    }
    const timer = setTimeout(
      () => fail(Object.assign(new Error(`${what}: no whole answer within ${Math.round(timeoutMs)} ms`), { name: 'TimeoutError' })),
      timeoutMs,
    )
    req.on('error', (error) => fail(new Error(`${what}: ${error.message}`, { cause: error })))
    req.end(payload)
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
      const r = await request(port, { path, timeoutMs: 1000 })
      if (r.status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`not ready on ${path} within ${timeoutMs} ms:\n${output()}`)
}

/**
 * Bytes of a response on the wire, minus the Date/Connection/Keep-Alive lines Node adds to both servers.
 * @param {Answer} captured
 */
export function wireSize(captured) {
  let n = `HTTP/1.1 ${captured.status} X\r\n`.length
  for (const [k, v] of captured.rawHeaders) {
    if (['date', 'connection', 'keep-alive'].includes(k.toLowerCase())) continue
    n += k.length + 2 + Buffer.byteLength(v) + 2
  }
  return n + 2 + captured.bytes.length
}
