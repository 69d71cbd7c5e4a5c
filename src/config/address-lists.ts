import { BlockList, isIP } from 'node:net'

/**
 * The two lists of network names among the variables: TRUST_PROXY (the proxies' addresses and
 * CIDRs) and CORS_ORIGINS (browser origins), each checked and read as what it lists.
 */

/** What is wrong with TRUST_PROXY (the message after its name), or undefined. */
export function trustProxyProblem(raw: string): string | undefined {
  if (raw === 'false') return undefined
  // Fastify 5 trusts nothing for a bare hop count (it cannot check the immediate peer), so a
  // count would silently put every client behind the proxy into one window: refuse it.
  if (/^\d+$/.test(raw)) return "hop counts are not supported: list the proxies' addresses or CIDRs (e.g. 10.0.0.0/8)"
  for (const part of raw.split(',')) {
    const problem = trustedProxyEntryProblem(part.trim())
    if (problem !== undefined) return problem
  }
  return undefined
}

/**
 * One TRUST_PROXY entry, checked as Fastify (proxy-addr) will read it, so a bad one stops the start
 * with a message naming TRUST_PROXY rather than failing later inside Fastify.
 */
function trustedProxyEntryProblem(entry: string): string | undefined {
  if (entry === 'loopback' || entry === 'linklocal' || entry === 'uniquelocal') return undefined
  const bad = (why: string) => `must be false or a comma list of addresses/CIDRs (bad entry ${JSON.stringify(entry)}: ${why})`
  const [address = '', prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return bad('not an IP address or CIDR')
  if (prefix === undefined) return undefined
  const max = family === 4 ? 32 : 128
  const length = /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN
  if (!(length >= 0 && length <= max)) return bad(`the prefix length of an IPv${family} CIDR is 1 to ${max}`)
  const range = new BlockList()
  try {
    range.addSubnet(address, length, family === 4 ? 'ipv4' : 'ipv6')
  } catch {
    return bad('not an IP address or CIDR')
  }
  // A range holding both ends of a family holds all of it (::ffff:0:0/96 is every IPv4 peer).
  const everyone =
    (range.check('0.0.0.0', 'ipv4') && range.check('255.255.255.255', 'ipv4')) ||
    (range.check('::', 'ipv6') && range.check('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ipv6'))
  if (everyone) {
    return `entry ${JSON.stringify(entry)} trusts every peer, so any client could forge its address in X-Forwarded-For: list only the proxies' addresses or CIDRs`
  }
  return undefined
}

/** What is wrong with CORS_ORIGINS (the message after its name), or undefined. */
export function corsOriginsProblem(raw: string): string | undefined {
  if (raw.trim() === '' || raw.trim() === '*') return undefined
  for (const entry of raw.split(',')) {
    const origin = entry.trim()
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    if (parsed === undefined || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      return `must be * or a comma list of origins such as https://app.example.com (bad entry ${JSON.stringify(origin)})`
    }
  }
  return undefined
}

/** TRUST_PROXY as Fastify takes it: false, or the list without the spaces around its entries. */
export function trustProxy(raw: string): false | string {
  return raw === 'false'
    ? false
    : raw
        .split(',')
        .map((part) => part.trim())
        .join(',')
}

/** CORS_ORIGINS: none (undefined), any (`*`), or the list of origins. */
export function corsOrigins(raw: string | undefined): string[] | '*' | undefined {
  const trimmed = raw?.trim()
  if (trimmed === undefined || trimmed === '') return undefined
  if (trimmed === '*') return '*'
  return trimmed.split(',').map((entry) => entry.trim())
}
