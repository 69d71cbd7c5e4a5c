/**
 * What the fuzzer's engine (runner.ts) needs to know of a listener it talks to: its port, the
 * oracle of its OpenAPI document, the credentials its auth choices stand for, the ids it has
 * handed out, and an optional observer that checks what one answer must have changed (or not)
 * behind it. Also the loopback client addresses and the statistics every property shares.
 */
import net from 'node:net'
import type { AbuseCase, AuthChoice } from './arbitraries.js'
import type { Oracle } from './oracle.js'
import type { FuzzOperation } from './surface.js'
import type { WireResponse } from './transport.js'

export const REQUEST_TIMEOUT_MS = Number(process.env.FUZZ_REQUEST_TIMEOUT_MS ?? 5000)

/**
 * Client addresses spread over 127.0.0.0/8 (the whole block is loopback on Linux), so the
 * per-address limit for keyless requests is not one shared bucket. Where only 127.0.0.1 exists
 * (macOS by default), every client is 127.0.0.1.
 */
let loopbackBlock = true
export const clientAddress = (n: number) => (loopbackBlock ? `127.0.0.${n}` : '127.0.0.1')

/**
 * Addresses no property sends from (127.1.0.1 to .250, in turn), for checks whose answer must not
 * depend on a per-address limit that the fuzzed traffic may have spent.
 */
let spare = 0
export const spareAddress = () => (loopbackBlock ? `127.1.0.${1 + (spare++ % 250)}` : '127.0.0.1')

export async function probeLoopbackBlock(port: number): Promise<void> {
  loopbackBlock = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2' })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

export class FuzzStats {
  cases = 0
  readonly statuses = new Map<string, number>()
  /** Collect mode (FUZZ_COLLECT=1): problems are recorded per kind instead of failing the run. */
  collect = false
  readonly problems = new Map<string, { count: number; example: string }>()
  record(label: string): void {
    this.cases++
    this.statuses.set(label, (this.statuses.get(label) ?? 0) + 1)
  }
  /** In collect mode, records and swallows the failure; otherwise throws it. */
  fail(message: string): void {
    if (!this.collect) throw new Error(message)
    for (const line of message.split('\n').filter((l) => !l.startsWith('  '))) {
      const kind = line
        .replace(/\d+/g, 'N')
        .replace(/"[^"]*"/g, '"…"')
        .slice(0, 140)
      const entry = this.problems.get(kind)
      if (entry) entry.count++
      else this.problems.set(kind, { count: 1, example: message.slice(0, 1500) })
    }
  }
  byStatus(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const [label, n] of this.statuses) {
      const status = label.split(' ')[2] ?? '?'
      out[status] = (out[status] ?? 0) + n
    }
    return out
  }
}

/**
 * The secrets behind the auth choices on one listener. Public: `valid` an Enterprise key with
 * huge limits, `free` a Free key, `revoked` a revoked key, `staging` a key of the other
 * environment. Admin: `valid` an admin token, `revoked` a revoked one, `free` and `staging` API
 * keys (never admin tokens).
 */
export interface Credentials {
  valid: string
  free: string
  revoked: string
  staging: string
  /** A valid key with READ_ONLY_SCOPES (on the admin listener: an API key, so no credential there). */
  readOnly: string
}

/** The scopes of the `read-only` credential: every write of the public API is 403 insufficient_scope for it. */
export const READ_ONLY_SCOPES = ['pets:read', 'orders:read'] as const

/** One request as sent, for observers. */
export interface SentRequest {
  case: AbuseCase
  /** The path with `<known N>` resolved. */
  path: string
  operation: FuzzOperation | undefined
}

/** Checks what an answer must have changed behind the listener, or that a refusal changed nothing. */
export interface Observer<Before = unknown> {
  before(sent: SentRequest): Promise<Before>
  /** Problems found, each a sentence. */
  after(sent: SentRequest, response: WireResponse, before: Before): Promise<string[]>
}

export interface Endpoint {
  name: string
  port: number
  oracle: Oracle
  credentials: Credentials
  /** Auth choices that certainly present no valid credential here (a 2xx would be a bypass). */
  unauthenticated: ReadonlySet<AuthChoice>
  /** Ids from the Locations of 201 answers, oldest first: what `<known N>` stands for. */
  knownIds: string[]
  observer?: Observer
}

/** The Authorization header lines an auth choice stands for, with these credentials. */
export function authHeaders(
  choice: AuthChoice,
  { valid, free, revoked, staging, readOnly }: Credentials,
): Array<[string, string | Buffer]> {
  const last = valid.at(-1)!
  switch (choice) {
    case 'none':
      return []
    case 'empty':
      return [['authorization', '']]
    case 'valid':
      return [['authorization', `Bearer ${valid}`]]
    case 'valid-lower-scheme':
      return [['authorization', `bearer ${valid}`]]
    case 'valid-upper-scheme':
      return [['authorization', `BEARER ${valid}`]]
    case 'valid-double-space':
      return [['authorization', `Bearer  ${valid}`]]
    case 'valid-tab':
      return [['authorization', `Bearer\t${valid}`]]
    case 'valid-trailing-space':
      return [['authorization', `Bearer ${valid} `]]
    case 'valid-leading-space':
      return [['authorization', ` Bearer ${valid}`]]
    case 'valid-comma-suffix':
      return [['authorization', `Bearer ${valid}, Basic x`]]
    case 'free':
      return [['authorization', `Bearer ${free}`]]
    case 'read-only':
      return [['authorization', `Bearer ${readOnly}`]]
    case 'revoked':
      return [['authorization', `Bearer ${revoked}`]]
    case 'staging':
      return [['authorization', `Bearer ${staging}`]]
    case 'wrong-checksum':
      return [['authorization', `Bearer ${valid.slice(0, -1)}${last === 'A' ? 'B' : 'A'}`]]
    case 'truncated':
      return [['authorization', `Bearer ${valid.slice(0, 20)}`]]
    case 'garbage-token':
      return [['authorization', 'Bearer as_live_!!!~~~']]
    case 'basic':
      return [['authorization', `Basic ${Buffer.from('user:' + valid).toString('base64')}`]]
    case 'token-scheme':
      return [['authorization', `Token ${valid}`]]
    case 'bearer-only':
      return [['authorization', 'Bearer']]
    case 'bearer-space':
      return [['authorization', 'Bearer ']]
    case 'long-600':
      return [['authorization', `Bearer ${'a'.repeat(600)}`]]
    case 'long-9000':
      return [['authorization', `Bearer ${'a'.repeat(9000)}`]]
    case 'non-ascii':
      return [['authorization', Buffer.from(`Bearer ${valid.slice(0, 10)}é€${valid.slice(12)}`, 'utf8')]]
    case 'dup-valid-garbage':
      return [
        ['authorization', `Bearer ${valid}`],
        ['authorization', 'Bearer garbage'],
      ]
    case 'dup-garbage-valid':
      return [
        ['authorization', 'Bearer garbage'],
        ['authorization', `Bearer ${valid}`],
      ]
  }
}

/** The credential an accepted request was authenticated with: `free`, or else `valid` (every other choice that can pass). */
export const credentialOf = (choice: AuthChoice): 'valid' | 'free' => (choice === 'free' ? 'free' : 'valid')
