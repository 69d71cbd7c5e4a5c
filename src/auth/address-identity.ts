import { isIPv6 } from 'node:net'
import { ADDRESS_IDENTITY_PREFIX } from '../limits/address-identities.js'

/**
 * The identity keyless requests are limited by, for an address from parseAddress. IPv4: the
 * address. IPv6: its /64 prefix, since one client typically holds a whole /64 and could otherwise
 * rotate through addresses at will.
 */
export function addressIdentity(address: string): string {
  return ADDRESS_IDENTITY_PREFIX + prefixOf(address, 4)
}

/**
 * The site an address belongs to, which answers for all its clients when a listener is full
 * (http/connection-share.ts). IPv4: the address (unrelated clients share a /24: carriers' NAT
 * pools, clouds). IPv6: its /48, a site's usual assignment: one host holds as many /64s as it
 * likes inside it, and each would otherwise count as a client of its own.
 */
export function addressSite(address: string): string {
  return prefixOf(address, 3)
}

/** IPv4: the address. IPv6: its first `groups` groups, written one way (a prefix of 16 × groups bits). */
function prefixOf(address: string, groups: number): string {
  // No colon, no IPv6: the common IPv4 case skips isIPv6's regular expression (every keyless request).
  if (!address.includes(':') || !isIPv6(address)) return address
  // Canonical form: no leading zeros, lower case. A dotted tail (`::1.2.3.4`) only follows six
  // zero groups, so counting it as one group never moves the first four.
  const [head = '', tail] = address.split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const all = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  return `${all.slice(0, groups).join(':')}::/${groups * 16}`
}
