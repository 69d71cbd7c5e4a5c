/**
 * Each client's share of a listener's connections. `maxConnections` bounds a listener's open
 * connections, but not who holds them: one client holding slow connections took most of them, and
 * every other client's new connections were closed as soon as they were accepted. Here one client
 * holds at most `perClient` at once; over it a new connection is destroyed at once, before it
 * costs a request's worth of work (no answer: the client is not reading anyway). docs/limits.md.
 */
import type { Server, Socket } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import { parseAddress } from './client-address.js'

export interface ConnectionShare {
  /** The most connections one client may hold at once. */
  perClient: number
  /** The client an address (from parseAddress) belongs to: the address, or a whole IPv6 prefix. */
  clientOf(address: string): string
  /** Peers without a share of their own (trusted proxies, which carry many clients' connections). */
  exempt(address: string): boolean
  /** Told of each connection refused for its client's share. */
  onRefused(): void
}

/**
 * Counts each client's open connections on `server` and refuses those over its share. The client
 * is the socket's peer: behind a proxy that is the proxy, whatever it forwards.
 */
export function shareConnections(server: Server, share: ConnectionShare): void {
  const open = new Map<string, number>()
  // Before Node's HTTP listener: a refused socket is destroyed before it sets up a parser
  // for it, which then sees a closed socket.
  server.prependListener('connection', (socket: Socket) => {
    // No address: the socket closed before its peer could be read, nothing to count.
    const address = parseAddress(socket.remoteAddress ?? '')
    if (address === undefined || share.exempt(address)) return
    const client = share.clientOf(address)
    const held = open.get(client) ?? 0
    if (held >= share.perClient) {
      socket.destroy()
      share.onRefused()
      return
    }
    open.set(client, held + 1)
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1
      if (left === 0) open.delete(client)
      else open.set(client, left)
    })
  })
}

/** Whether a peer is a proxy `trustProxy` (TRUST_PROXY) names, decided as Fastify decides it (proxy-addr). */
export function trustedPeer(trustProxy: false | string): (address: string) => boolean {
  if (trustProxy === false) return () => false
  const trusted = proxyAddr.compile(trustProxy.split(',').map((entry) => entry.trim()))
  return (address) => trusted(address, 0)
}
