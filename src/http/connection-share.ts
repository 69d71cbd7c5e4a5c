/**
 * Each client's share of a listener's connections. `maxConnections` bounds a listener's open
 * connections, but not who holds them: one client holding slow connections took most of them, and
 * every other client's new connections were closed as soon as they were accepted. Here one client
 * holds at most `perClient` at once; over it a new connection is destroyed at once, before it
 * costs a request's worth of work (no answer: the client is not reading anyway).
 *
 * A share per client does not stop a few dozen clients of one attacker (60 addresses at 256 each
 * are more than 10,000 places), so a full listener is shared too: a new connection of a site
 * (an IPv4 address, an IPv6 /48) that holds fewer than the site holding the most takes the place
 * of that site's longest idle connection (as nginx reuses idle keep-alive connections when it runs
 * out of them). A full listener refuses only a site that holds about as many as any other.
 * docs/limits.md.
 */
import type { Server as HttpServer, IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import { parseAddress } from './client-address.js'

export interface ConnectionShare {
  /** The most connections one client may hold at once. */
  perClient: number
  /** The most connections the listener holds at once (MAX_CONNECTIONS). */
  capacity: number
  /** The client an address (from parseAddress) belongs to: the address, or a whole IPv6 prefix. */
  clientOf(address: string): string
  /** The site a client belongs to, which answers for all its clients when the listener is full: the address, or a larger IPv6 prefix. */
  siteOf(address: string): string
  /** Peers without a share of their own (trusted proxies, which carry many clients' connections). */
  exempt(address: string): boolean
  /**
   * Told of each connection refused: a new one over its client's share, or the listener full; or
   * one closed for having more than MAX_PIPELINED requests unanswered.
   */
  onRefused(reason: 'per_address' | 'max_connections' | 'pipelining'): void
  /** Told of each idle connection closed to make room for a site holding fewer. */
  onEvicted(): void
}

/** A site's open connections, and those of them between requests (the longest idle first). */
interface Site {
  held: number
  idle: Set<Socket>
}

/** The most requests a connection may have dispatched and not yet answered (HTTP/1.1 pipelining). */
export const MAX_PIPELINED = 32

/** What an admitted connection counts in. */
interface Held {
  client: string | undefined
  site: Site | undefined
  requests: number
}

/**
 * The most sites a full listener looks at for an idle connection to close, per new connection: a
 * flood whose every connection is busy costs each new one this much at most, then a refusal.
 */
const SITES_SEARCHED = 64

/**
 * Counts each client's and each site's open connections on `server` and refuses those over the
 * client's share, or over a full listener's share of the site. The client is the socket's peer:
 * behind a proxy that is the proxy, whatever it forwards. Takes over `maxConnections` from Node
 * (which would close a new connection before this could make room for it): do not set it too.
 */
export function shareConnections(server: HttpServer, share: ConnectionShare): void {
  const clients = new Map<string, number>()
  const sites = new Map<string, Site>()
  /** The sites by how many connections they hold, to find the one holding the most at once. */
  const byHeld = new Map<number, Set<Site>>()
  let most = 0
  const books = new WeakMap<Socket, Held>()
  let open = 0

  const move = (site: Site, by: 1 | -1) => {
    byHeld.get(site.held)?.delete(site)
    if (byHeld.get(site.held)?.size === 0) byHeld.delete(site.held)
    site.held += by
    if (site.held > 0) byHeld.set(site.held, (byHeld.get(site.held) ?? new Set()).add(site))
    if (site.held > most) most = site.held
    while (most > 0 && !byHeld.has(most)) most--
  }

  const release = (socket: Socket) => {
    const held = books.get(socket)
    if (held === undefined) return
    books.delete(socket)
    open--
    if (held.client !== undefined) {
      const left = (clients.get(held.client) ?? 1) - 1
      if (left === 0) clients.delete(held.client)
      else clients.set(held.client, left)
    }
    if (held.site !== undefined) {
      held.site.idle.delete(socket)
      move(held.site, -1)
    }
  }

  /** The longest idle connection of the site holding the most, if it holds at least two more than `held` (no swap between equals). */
  const idlest = (own: Site | undefined, held: number): Socket | undefined => {
    let searched = 0
    for (let count = most; count >= held + 2 && searched < SITES_SEARCHED; count--) {
      for (const site of byHeld.get(count) ?? []) {
        if (site === own) continue
        const [socket] = site.idle
        if (socket !== undefined) return socket
        if (++searched === SITES_SEARCHED) return undefined
      }
    }
    return undefined
  }

  // Before Node's HTTP listener: a refused socket is destroyed before it sets up a parser
  // for it, which then sees a closed socket.
  server.prependListener('connection', (socket: Socket) => {
    // No address: the socket closed before its peer could be read, nothing to count.
    const address = parseAddress(socket.remoteAddress ?? '')
    if (address === undefined) return
    const exempt = share.exempt(address)
    const client = exempt ? undefined : share.clientOf(address)
    if (client !== undefined && (clients.get(client) ?? 0) >= share.perClient) {
      socket.destroy()
      share.onRefused('per_address')
      return
    }
    const key = exempt ? undefined : share.siteOf(address)
    const site = key === undefined ? undefined : (sites.get(key) ?? { held: 0, idle: new Set<Socket>() })
    if (open >= share.capacity) {
      const victim = idlest(site, site?.held ?? 0)
      if (victim === undefined) {
        socket.destroy()
        share.onRefused('max_connections')
        return
      }
      release(victim)
      victim.destroy()
      share.onEvicted()
    }
    open++
    if (client !== undefined) clients.set(client, (clients.get(client) ?? 0) + 1)
    if (key !== undefined && site !== undefined) {
      sites.set(key, site)
      site.idle.add(socket)
      move(site, 1)
      socket.once('close', () => {
        release(socket)
        // Only this site's own entry: one closed to make room closes after its release, when the
        // key may already have a new site.
        if (site.held === 0 && sites.get(key) === site) sites.delete(key)
      })
    } else socket.once('close', () => release(socket))
    books.set(socket, { client, site, requests: 0 })
  })

  // A connection with a request in flight is not idle: it is never closed for another's place. One
  // with MAX_PIPELINED requests unanswered is destroyed before another of its requests is
  // dispatched: Node's parser hands over every request of a socket read (a 64 KiB read of small
  // GETs is hundreds) before it looks at the connection's backpressure, so a client that pipelines
  // and never reads made the server build hundreds of answers in one go, and the event loop stalled
  // for over 2 s under c8 in a CI run (another client's request was cut off by the headers
  // timeout). Browsers do not pipeline; clients that do keep a few requests in flight. The
  // dispatch to the server's other request listeners (Fastify's) is done here so that a request
  // over the cap costs nothing: its connection is already closed, and nobody reads the answer.
  const listeners = server.listeners('request') as RequestListener[]
  server.removeAllListeners('request')
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket
    const held = books.get(socket)
    if (held !== undefined) {
      if (held.requests >= MAX_PIPELINED || socket.destroyed) {
        if (!socket.destroyed) {
          socket.destroy()
          share.onRefused('pipelining')
        }
        return
      }
      held.requests++
      held.site?.idle.delete(socket)
      response.once('close', () => {
        held.requests--
        // Idle again, as the most recently used: the longest idle go first.
        if (held.requests === 0 && books.get(socket) === held) held.site?.idle.add(socket)
      })
    }
    for (const listener of listeners) listener.call(server, request, response)
  })
}

/** Whether a peer is a proxy `trustProxy` (TRUST_PROXY) names, decided as Fastify decides it (proxy-addr). */
export function trustedPeer(trustProxy: false | string): (address: string) => boolean {
  if (trustProxy === false) return () => false
  const trusted = proxyAddr.compile(trustProxy.split(',').map((entry) => entry.trim()))
  return (address) => trusted(address, 0)
}
