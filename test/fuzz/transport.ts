/**
 * Two ways to put a request on the wire for the HTTP fuzzer:
 *
 * - `sendHttp`: node:http (keep-alive agent), for requests a well-behaved client can send;
 * - `sendRaw`: a bare TCP socket with the exact request bytes, for what node:http refuses to
 *   send (invalid UTF-8 or control bytes in headers, duplicate headers, lying Content-Length,
 *   malformed request lines, ...).
 *
 * Both return the first final (non-1xx) response with its raw body bytes, or throw a
 * `TransportError` of kind 'timeout' (the server did not answer in time: a hang) or 'closed'
 * (the connection ended without a complete response).
 */
import http from 'node:http'
import net from 'node:net'

export interface WireResponse {
  status: number
  /** Lower-cased names; repeated headers joined with ', ' (set-cookie excepted, which we never get). */
  headers: Record<string, string>
  /** Every header line as received, in order (to spot duplicates). */
  rawHeaders: Array<[string, string]>
  body: Buffer
}

export class TransportError extends Error {
  constructor(
    readonly kind: 'timeout' | 'closed' | 'client',
    message: string,
  ) {
    super(message)
    this.name = 'TransportError'
  }
}

export interface HttpRequestSpec {
  port: number
  localAddress: string
  method: string
  path: string
  headers: Array<[string, string]>
  body?: Buffer
  /** Send the body as two writes with Transfer-Encoding: chunked instead of Content-Length. */
  chunked?: boolean
  timeoutMs: number
}

const agents = new Map<string, http.Agent>()
function agentFor(localAddress: string): http.Agent {
  let agent = agents.get(localAddress)
  if (!agent) {
    // Idle sockets are dropped after 2 s, before the server's keep-alive timeout (5 s) closes them.
    agent = new http.Agent({ keepAlive: true, maxSockets: 4, timeout: 2000, localAddress } as http.AgentOptions)
    agents.set(localAddress, agent)
  }
  return agent
}

export function destroyAgents(): void {
  for (const agent of agents.values()) agent.destroy()
  agents.clear()
}

/**
 * A keep-alive socket the server closes as idle while a request is being written on it fails with
 * ECONNRESET ("socket hang up"): the race that Node's docs describe for `request.reusedSocket`.
 * Such a request never reached the app; it is sent again once, on a fresh connection.
 */
export async function sendHttp(spec: HttpRequestSpec): Promise<WireResponse> {
  try {
    return await sendHttpOnce(spec, false)
  } catch (error) {
    if (error instanceof ReusedSocketReset) return sendHttpOnce(spec, true)
    throw error
  }
}

class ReusedSocketReset extends TransportError {}

function sendHttpOnce(spec: HttpRequestSpec, fresh: boolean): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    let settled = false
    const done = (error: Error | undefined, value?: WireResponse) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (error) reject(error)
      else resolve(value!)
    }
    const headers: Record<string, string | string[]> = {}
    for (const [name, value] of spec.headers) {
      const existing = headers[name]
      headers[name] = existing === undefined ? value : ([] as string[]).concat(existing, value)
    }
    // node:http frames a GET/HEAD/DELETE body only when told to (it would send the bytes unframed).
    if (spec.body !== undefined && spec.chunked) headers['transfer-encoding'] = 'chunked'
    else if (spec.body !== undefined && !Object.keys(headers).some((n) => n.toLowerCase() === 'content-length')) {
      headers['content-length'] = String(spec.body.length)
    }
    let req: http.ClientRequest
    try {
      req = http.request({
        host: '127.0.0.1',
        port: spec.port,
        method: spec.method,
        path: spec.path,
        headers,
        agent: fresh ? false : agentFor(spec.localAddress),
        localAddress: spec.localAddress,
      })
    } catch (error) {
      // node:http refused to build the request (invalid header): the generator's fault, not the server's.
      done(new TransportError('client', `node:http refused the request: ${(error as Error).message}`))
      return
    }
    const timer = setTimeout(() => {
      req.destroy()
      done(new TransportError('timeout', `no response within ${spec.timeoutMs} ms`))
    }, spec.timeoutMs)
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (req.reusedSocket && error.code === 'ECONNRESET') done(new ReusedSocketReset('closed', `reused socket reset: ${error.message}`))
      else done(new TransportError('closed', `connection error: ${error.message}`))
    })
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', (error) => done(new TransportError('closed', `response error: ${error.message}`)))
      res.on('end', () => {
        const rawHeaders: Array<[string, string]> = []
        for (let i = 0; i < res.rawHeaders.length; i += 2) rawHeaders.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!])
        const merged: Record<string, string> = {}
        for (const [k, v] of rawHeaders) merged[k] = merged[k] === undefined ? v : `${merged[k]}, ${v}`
        done(undefined, { status: res.statusCode ?? 0, headers: merged, rawHeaders, body: Buffer.concat(chunks) })
      })
    })
    try {
      if (spec.body === undefined) req.end()
      else if (spec.chunked) {
        const mid = Math.floor(spec.body.length / 2)
        req.write(spec.body.subarray(0, mid))
        req.end(spec.body.subarray(mid))
      } else req.end(spec.body)
    } catch (error) {
      req.destroy()
      done(new TransportError('client', `node:http refused the body: ${(error as Error).message}`))
    }
  })
}

export interface RawRequestSpec {
  port: number
  localAddress: string
  /** The complete request bytes. */
  data: Buffer
  /** The request method as sent (a HEAD response has no body). */
  method: string
  /** Half-close the socket after writing (the server sees EOF). */
  endAfterWrite: boolean
  timeoutMs: number
}

/** Incremental parser of the first final response in `buf`; undefined while incomplete. */
export function parseResponse(buf: Buffer, method: string, closed: boolean): { response: WireResponse; interim: number[] } | undefined {
  let offset = 0
  const interim: number[] = []
  for (;;) {
    const headEnd = buf.indexOf('\r\n\r\n', offset)
    if (headEnd < 0) return undefined
    const head = buf.subarray(offset, headEnd).toString('latin1')
    const [statusLine, ...lines] = head.split('\r\n')
    const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine ?? '')
    if (!m) throw new TransportError('closed', `malformed status line: ${JSON.stringify(statusLine)}`)
    const status = Number(m[1])
    const rawHeaders: Array<[string, string]> = []
    for (const line of lines) {
      const colon = line.indexOf(':')
      if (colon <= 0) throw new TransportError('closed', `malformed header line: ${JSON.stringify(line)}`)
      rawHeaders.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()])
    }
    const headers: Record<string, string> = {}
    for (const [k, v] of rawHeaders) headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`
    const bodyStart = headEnd + 4
    if (status >= 100 && status < 200) {
      interim.push(status)
      offset = bodyStart
      continue
    }
    if (method === 'HEAD' || status === 204 || status === 304) {
      return { response: { status, headers, rawHeaders, body: Buffer.alloc(0) }, interim }
    }
    if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) {
      const parts: Buffer[] = []
      let p = bodyStart
      for (;;) {
        const lineEnd = buf.indexOf('\r\n', p)
        if (lineEnd < 0) return undefined
        const size = parseInt(buf.subarray(p, lineEnd).toString('latin1').split(';')[0]!, 16)
        if (Number.isNaN(size)) throw new TransportError('closed', 'malformed chunk size')
        if (size === 0) {
          // Trailers end with an empty line.
          const noTrailers = buf.length >= lineEnd + 4 && buf.subarray(lineEnd + 2, lineEnd + 4).toString('latin1') === '\r\n'
          if (!noTrailers && buf.indexOf('\r\n\r\n', lineEnd + 2) < 0) return undefined
          return { response: { status, headers, rawHeaders, body: Buffer.concat(parts) }, interim }
        }
        if (buf.length < lineEnd + 2 + size + 2) return undefined
        parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size))
        p = lineEnd + 2 + size + 2
      }
    }
    const cl = headers['content-length']
    if (cl !== undefined) {
      const n = Number(cl)
      if (!Number.isSafeInteger(n) || n < 0) throw new TransportError('closed', `bad Content-Length in response: ${cl}`)
      if (buf.length < bodyStart + n) return undefined
      return { response: { status, headers, rawHeaders, body: buf.subarray(bodyStart, bodyStart + n) }, interim }
    }
    // Neither: the body runs to the end of the connection.
    if (!closed) return undefined
    return { response: { status, headers, rawHeaders, body: buf.subarray(bodyStart) }, interim }
  }
}

export function sendRaw(spec: RawRequestSpec): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    let settled = false
    let buf = Buffer.alloc(0)
    const socket = net.connect({ host: '127.0.0.1', port: spec.port, localAddress: spec.localAddress })
    const done = (error: Error | undefined, value?: WireResponse) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      if (error) reject(error)
      else resolve(value!)
    }
    const timer = setTimeout(() => done(new TransportError('timeout', `no response within ${spec.timeoutMs} ms`)), spec.timeoutMs)
    const tryParse = (closed: boolean) => {
      try {
        const parsed = parseResponse(buf, spec.method, closed)
        if (parsed) done(undefined, parsed.response)
        else if (closed) done(new TransportError('closed', `connection closed after ${buf.length} bytes without a complete response`))
      } catch (error) {
        done(error as Error)
      }
    }
    socket.on('connect', () => {
      socket.write(spec.data)
      if (spec.endAfterWrite) socket.end()
    })
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk])
      tryParse(false)
    })
    socket.on('end', () => tryParse(true))
    socket.on('close', () => tryParse(true))
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A reset after the server has answered in full still counts as answered.
      if (buf.length > 0) tryParse(true)
      else done(new TransportError('closed', `socket error: ${error.code ?? error.message}`))
    })
  })
}
