import http from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction, type Socket } from 'node:net'
import { forbiddenAddress, type HostResolver } from './destination.js'
import type { AttemptResult } from './retries.js'

/**
 * One attempt of a delivery: one POST, outside any transaction, made so that a receiver can cost
 * the service nothing but the attempt itself:
 *
 * - The whole attempt (connection, TLS, the answer's head and the first MAX_RESPONSE_BYTES of its
 *   body) is bounded by WEBHOOK_TIMEOUT_MS; the rest of a longer answer is not read (the connection
 *   is closed): a receiver cannot make the service hold or store more.
 * - A redirect is not followed: it is a failed attempt (a receiver could otherwise send the service
 *   anywhere, past the destination rule).
 * - Server-side request forgery: unless WEBHOOK_ALLOW_PRIVATE_NETWORKS, the address connected to is
 *   judged again, at each attempt, by the rule an endpoint's URL was judged by at its creation
 *   (destination.ts' forbiddenAddress): a host name's addresses as the connection resolves them
 *   (the client's `lookup`: every address the name has, one forbidden is enough to refuse), an IP
 *   literal as written, and the socket's peer once connected. A name can resolve elsewhere since it
 *   was judged (DNS rebinding), so the judgement at creation alone would not do.
 * - Connections are kept alive between attempts (ReceiverConnections: a TLS handshake per attempt
 *   costs the service and every receiver more than the attempt itself). A connection is judged
 *   when it connects, and no request on it goes anywhere else; one idle for IDLE_CONNECTION_MS is
 *   closed, so that a name is resolved, and judged, again. An attempt that ends early (timed out,
 *   an answer past the cap, an error, a stop) closes its connection. A kept connection that the
 *   receiver closed meanwhile fails the request before any answer: it is sent again, once, on a
 *   new connection (what Node's documentation advises for `reusedSocket`).
 */

/** The most of an answer's body that is read; the rest is discarded with the connection. */
export const MAX_RESPONSE_BYTES = 64 * 1024
/** What the delivery log keeps of an answer's body. */
export const RESPONSE_EXCERPT_CHARS = 1024
const USER_AGENT = 'animal-store-webhooks/1'

/**
 * How long an idle connection to a receiver is kept: under the 5 s that Node's HTTP server (a
 * common receiver) keeps one, so that the service seldom reuses one the receiver is closing.
 */
export const IDLE_CONNECTION_MS = 4000

/** The connections kept alive to receivers, one pool per scheme; `close` ends them all (a server stopping). */
export class ReceiverConnections {
  readonly http = new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' })
  readonly https = new https.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' })

  close(): void {
    this.http.destroy()
    this.https.destroy()
  }
}

export interface SendRules {
  /** WEBHOOK_TIMEOUT_MS: the whole attempt. */
  timeoutMs: number
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: no address is refused. */
  allowPrivateNetworks: boolean
  /** How host names resolve (the domain's: the system's resolver, or a test's). */
  resolve: HostResolver
  maxResponseBytes?: number
  /** Connections kept between attempts; none: one connection per attempt, closed after it. */
  connections?: ReceiverConnections
}

/** What an attempt stopped by its caller (a server stopping) says. */
export const INTERRUPTED = 'interrupted: the server stopped before an answer came'

/** Why `address` (connected to for `host`) is refused, or undefined when it may be used. */
function refusal(address: string, host: string, rules: SendRules): string | undefined {
  if (rules.allowPrivateNetworks) return undefined
  const kind = forbiddenAddress(address)
  if (kind === undefined) return undefined
  return host === address
    ? `refused: ${address} is ${kind} (WEBHOOK_ALLOW_PRIVATE_NETWORKS is off)`
    : `refused: ${host} resolves to ${address}, ${kind} (WEBHOOK_ALLOW_PRIVATE_NETWORKS is off)`
}

/** A connection refused by the rule: its message says it all. */
const REFUSED = 'EWEBHOOKREFUSED'
const refusedError = (message: string) => Object.assign(new Error(message), { code: REFUSED })

/** The client's resolver: the domain's, every address judged before any connection is made. */
function guardedLookup(rules: SendRules): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number | string }, callback: (...args: unknown[]) => void) => {
    rules.resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }))
        for (const address of addresses) {
          const refused = refusal(address, hostname, rules)
          if (refused !== undefined) return callback(refusedError(refused))
        }
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0)
        const usable = addresses.map((address) => ({ address, family: isIP(address) })).filter((a) => family === 0 || a.family === family)
        if (usable.length === 0) return callback(Object.assign(new Error(`${hostname}: no IPv${family} address`), { code: 'ENOTFOUND' }))
        if (options.all === true) return callback(null, usable)
        return callback(null, usable[0]!.address, usable[0]!.family)
      },
      (error: unknown) => callback(error),
    )
  }) as LookupFunction
}

const describe = (error: unknown): string => {
  const e = error as { code?: unknown; message?: unknown }
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : String(error)
  return typeof e.code === 'string' && e.code !== REFUSED && !message.includes(e.code) ? `${message} (${e.code})` : message
}

/** POSTs `body` with `headers` to `url` once; never rejects: a failure is the result's `error`. */
export function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  rules: SendRules,
  signal?: AbortSignal,
): Promise<AttemptResult> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const failed = (error: string, statusCode: number | null = null, excerpt: string | null = null): AttemptResult => ({
    statusCode,
    durationMs: elapsed(),
    error,
    responseExcerpt: excerpt,
  })
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return Promise.resolve(failed(`not a URL: ${url}`))
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') return Promise.resolve(failed(`not an http(s) URL: ${target.protocol}`))
  const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname
  if (isIP(host) !== 0) {
    const refused = refusal(host, host, rules)
    if (refused !== undefined) return Promise.resolve(failed(refused))
  }
  const maxBytes = rules.maxResponseBytes ?? MAX_RESPONSE_BYTES
  const pool = target.protocol === 'https:' ? rules.connections?.https : rules.connections?.http
  return new Promise<AttemptResult>((resolve) => {
    let settled = false
    let request: http.ClientRequest
    const interrupt = () => finish(failed(INTERRUPTED))
    /** `keep`: the answer was read whole, so its connection may serve the next attempt. */
    const finish = (result: AttemptResult, keep = false) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', interrupt)
      if (!keep || pool === undefined) request.destroy()
      resolve(result)
    }
    const timer = setTimeout(() => finish(failed(`timed out after ${rules.timeoutMs} ms`)), rules.timeoutMs)
    const send = (agent: http.Agent | false) => {
      const client = target.protocol === 'https:' ? https : http
      const sent = client.request(target, {
        method: 'POST',
        agent,
        lookup: guardedLookup(rules),
        headers: {
          ...headers,
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': USER_AGENT,
          ...(agent === false ? { connection: 'close' } : {}),
        },
      })
      request = sent
      sent.on('socket', (socket: Socket) => {
        // A kept connection was judged when it connected; a new one is judged on its peer: the
        // last word, whatever resolved it (or an IP literal).
        if (!socket.connecting) return
        socket.once('connect', () => {
          const peer = socket.remoteAddress
          const refused = peer === undefined ? 'refused: no peer address' : refusal(peer, host, rules)
          if (refused !== undefined) sent.destroy(refusedError(refused))
        })
      })
      let answered = false
      sent.on('error', (error: NodeJS.ErrnoException) => {
        if (settled || sent !== request) return
        // The receiver closed a kept connection just as it was reused: nothing was answered.
        if (sent.reusedSocket && !answered && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) return send(false)
        finish(failed(describe(error)))
      })
      sent.on('response', (response) => {
        answered = true
        const statusCode = response.statusCode ?? 0
        const chunks: Buffer[] = []
        let bytes = 0
        const done = (whole: boolean) => {
          const excerpt = Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8').slice(0, RESPONSE_EXCERPT_CHARS)
          const text = excerpt === '' ? null : excerpt
          if (statusCode >= 200 && statusCode < 300)
            return finish({ statusCode, durationMs: elapsed(), error: null, responseExcerpt: text }, whole)
          if (statusCode >= 300 && statusCode < 400) {
            const location = response.headers.location
            return finish(
              failed(`redirect not followed (${statusCode}${location === undefined ? '' : ` to ${location}`})`, statusCode, text),
              whole,
            )
          }
          return finish(failed(`the receiver answered ${statusCode}`, statusCode, text), whole)
        }
        response.on('data', (chunk: Buffer) => {
          if (settled) return
          chunks.push(chunk)
          bytes += chunk.length
          // Enough read: the rest is not, and the connection closes with the request (finish).
          if (bytes >= maxBytes) done(false)
        })
        response.on('end', () => done(true))
        response.on('error', (error) => finish(failed(describe(error), statusCode)))
      })
      sent.end(body)
    }
    send(pool ?? false)
    if (signal?.aborted === true) interrupt()
    else signal?.addEventListener('abort', interrupt, { once: true })
  })
}
