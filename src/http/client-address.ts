import { isIPv6 } from 'node:net'

/**
 * The identity keyless requests are limited by. IPv4: the address. IPv6: its /64 prefix, since
 * one client typically holds a whole /64 and could otherwise rotate through addresses at will.
 */
export function addressIdentity(ip: string): string {
  if (!isIPv6(ip)) return 'a:' + ip
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped) return 'a:' + mapped[1]
  const [head = '', tail = ''] = ip.toLowerCase().split('::')
  const left = head ? head.split(':') : []
  const right = ip.includes('::') ? (tail ? tail.split(':') : []) : []
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left
  return (
    'a:' +
    groups
      .slice(0, 4)
      .map((g) => g.replace(/^0+(?=.)/, ''))
      .join(':') +
    '::/64'
  )
}
