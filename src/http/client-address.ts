import { isIP, SocketAddress } from 'node:net'
import type { FastifyRequest } from 'fastify'

// Node 20 has no SocketAddress.parse (22.13+), so the two forms a proxy may append a port in are
// matched here; isIP and SocketAddress then judge the address itself.
const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/
const BRACKETED_IPV6 = /^\[([^\]]+)\](?::\d{1,5})?$/
/** An IPv4-mapped IPv6 address as SocketAddress prints it, whatever form it was written in. */
const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/

/**
 * The address `value` names, in one canonical form, or undefined when it is not an address (a
 * hostname, `unknown`, anything else). A port is dropped (`1.2.3.4:5555`, `[::1]:80`), an IPv6
 * address is written the one way SocketAddress prints it, and an IPv4-mapped one (`::ffff:1.2.3.4`,
 * `::FFFF:c633:6401`, `0:0:0:0:0:ffff:…`) becomes the IPv4 address: otherwise each spelling of
 * one client would be a client of its own.
 */
export function parseAddress(value: string): string | undefined {
  const ipv4 = IPV4_WITH_PORT.exec(value)
  const ipv6 = BRACKETED_IPV6.exec(value)
  const host = ipv4?.[1] ?? ipv6?.[1] ?? value
  const family = isIP(host)
  if (family === 4 && ipv6 === null) return host
  if (family !== 6) return undefined
  let canonical: string
  try {
    canonical = new SocketAddress({ address: host, family: 'ipv6' }).address
  } catch {
    return undefined // isIP's pattern and libuv's parser could disagree on an odd zone id
  }
  return IPV4_MAPPED.exec(canonical)?.[1] ?? canonical
}

type AddressedRequest = Pick<FastifyRequest, 'ip' | 'socket' | 'log'>

/**
 * Returns a function giving the address a request is limited by: its client address (with
 * TRUST_PROXY, from X-Forwarded-For), or, when a trusted proxy forwarded something that is not an
 * address, the address of that proxy (the socket's peer) — never a bucket of the value's own, or
 * every new value would be a fresh window. That is reported once per function, not per request:
 * a flood of such values must not fill the log.
 */
export function createClientAddress(): (request: AddressedRequest) => string {
  let reported = false
  return (request) => {
    const address = parseAddress(request.ip ?? '')
    if (address !== undefined) return address
    const proxy = parseAddress(request.socket.remoteAddress ?? '') ?? 'unknown'
    // No address at all (a socket closed before its peer was read): nothing was forwarded.
    if (!reported && request.ip !== undefined) {
      reported = true
      request.log.warn(
        { forwardedFor: (request.ip ?? '').slice(0, 100), proxy },
        'a trusted proxy forwarded a client address that is not an address: such requests are limited as the proxy (reported once)',
      )
    }
    return proxy
  }
}

/** The one clientAddress of the process, shared by the guard (API keys and admin tokens alike) and the access line. */
export const clientAddress = createClientAddress()
