import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/*
 * Where a webhook may be sent (server-side request forgery). The service makes requests to URLs
 * an operator typed, from inside the network it runs in: without a rule, an endpoint could make it
 * call its own admin listener, a database's HTTP port, or the cloud's metadata service
 * (169.254.169.254) and keep the answers in its delivery log. So by default a destination is an
 * `https` URL without credentials whose host is, or resolves only to, global unicast addresses.
 *
 * Addresses are classified with ipaddr.js, whose tables follow IANA's special-purpose registries:
 * an address is allowed only when it is in none of them (`unicast`), and for IPv6 only in the
 * global unicast block 2000::/3 as well, which ipaddr.js leaves open for ::/96 (IPv4-compatible:
 * `::127.0.0.1`) and the unassigned rest. An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is
 * judged as the IPv4 address it carries, which is where a connection to it goes. A host written
 * as a number in any form (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`) is an IPv4 address
 * once the WHATWG URL parser has read it (`new URL`, as Node's http client does), so it is judged
 * as one. A name is judged by every address it resolves to now; the deliveries judge again the
 * address they actually connect to, since a name's addresses can change after it was judged.
 */

/** Every address a host name resolves to (A and AAAA), as a connection would find them. */
export type HostResolver = (hostname: string) => Promise<string[]>

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), which Node's http client uses too. */
export const systemResolver: HostResolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((found) => found.address)

/** How long a name may take to resolve before the URL is refused. */
export const RESOLVE_TIMEOUT_MS = 5_000

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address (where cloud metadata services answer)',
  uniqueLocal: 'a unique-local address',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  deprecatedSiteLocal: 'a site-local address',
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3')
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96')

/**
 * What kind of address `address` (an IPv4 or IPv6 address as text) is when webhooks may not go
 * there (`a loopback address`), or undefined when they may: a global unicast address. Text that is
 * no address is refused too. For the deliveries as much as for a new endpoint's URL.
 */
export function forbiddenAddress(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address'
  const parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6
    if (v6.isIPv4MappedAddress()) {
      const carried = v6.toIPv4Address()
      const kind = forbiddenAddress(carried.toString())
      return kind === undefined ? undefined : `${kind} mapped into IPv6 (${carried.toString()})`
    }
    const range = v6.range()
    if (range !== 'unicast') return RANGE_WORDS[range] ?? 'an address reserved for special use'
    if (v6.match(IPV4_COMPATIBLE)) return `an IPv4-compatible address (${ipaddr.fromByteArray(v6.toByteArray().slice(12)).toString()})`
    if (!v6.match(GLOBAL_UNICAST_V6)) return 'not a global unicast address'
    return undefined
  }
  const range = (parsed as ipaddr.IPv4).range()
  return range === 'unicast' ? undefined : (RANGE_WORDS[range] ?? 'an address reserved for special use')
}

export interface DestinationRules {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: `http` and any address allowed (development and tests). */
  allowPrivateNetworks: boolean
  resolve: HostResolver
}

/** A URL's problem, as said after its field's name (`url must use https`), or the URL as it will be called. */
export type DestinationVerdict = { url: URL } | { problem: string }

/**
 * Whether `text` may be a webhook's destination under `rules`: the URL as parsed (WHATWG, as the
 * deliveries will read it again), or what is wrong with it.
 */
export async function judgeDestination(text: string, rules: DestinationRules): Promise<DestinationVerdict> {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { problem: 'must be an absolute URL, such as https://hooks.example.com/animal-store' }
  }
  if (url.protocol !== 'https:' && !(rules.allowPrivateNetworks && url.protocol === 'http:'))
    return {
      problem: rules.allowPrivateNetworks
        ? `must be an http or https URL (got ${url.protocol})`
        : `must use https (got ${url.protocol}; http is allowed only with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true)`,
    }
  // Whatever the network: credentials in a URL would be shown wherever the endpoint is.
  if (url.username !== '' || url.password !== '') return { problem: 'must not carry a user name or password' }
  if (rules.allowPrivateNetworks) return { url }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  if (isIP(host) !== 0) {
    const kind = forbiddenAddress(host)
    return kind === undefined ? { url } : { problem: `must not point at ${kind}: ${host}${PRIVATE_HINT}` }
  }
  let addresses: string[]
  try {
    addresses = await withTimeout(rules.resolve(host), RESOLVE_TIMEOUT_MS)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    return { problem: `must name a host that resolves (${host}: ${typeof code === 'string' ? code : 'no answer'})` }
  }
  if (addresses.length === 0) return { problem: `must name a host that resolves (${host}: no address)` }
  for (const address of addresses) {
    const kind = forbiddenAddress(address)
    if (kind !== undefined) return { problem: `must not point at ${kind}: ${host} resolves to ${address}${PRIVATE_HINT}` }
  }
  return { url }
}

const PRIVATE_HINT = ' (allowed only with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true)'

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'timed out' })), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
