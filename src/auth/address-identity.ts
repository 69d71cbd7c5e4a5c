import { isIPv6 } from 'node:net'
import { ADDRESS_IDENTITY_PREFIX } from '../limits/address-identities.js'

/**
 * The identity keyless requests are limited by, for an address from parseAddress. IPv4: the
 * address. IPv6: its /64 prefix, since one client typically holds a whole /64 and could otherwise
 * rotate through addresses at will.
 */
export function addressIdentity(address: string): string {
  // No colon, no IPv6: the common IPv4 case skips isIPv6's regular expression (every keyless request).
  if (!address.includes(':') || !isIPv6(address)) return ADDRESS_IDENTITY_PREFIX + address
  // Canonical form: no leading zeros, lower case. A dotted tail (`::1.2.3.4`) only follows six
  // zero groups, so counting it as one group never moves the first four.
  const [head = '', tail] = address.split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  return ADDRESS_IDENTITY_PREFIX + groups.slice(0, 4).join(':') + '::/64'
}
