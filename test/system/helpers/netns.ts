/**
 * A client that is really not on loopback: a network namespace of the test's own, joined to this
 * one by a veth pair with addresses in 10.231.0.0/16 (host side .1, namespace side .2), and on
 * request IPv6 ones in fd31::/16 (many /64s of one /48 on the namespace's side). Its
 * traffic can reach only the host side of the pair: nothing leaves the machine. Needs root (`ip
 * netns add`); removed after the test, and when the test process exits.
 */
import { execFileSync, spawn } from 'node:child_process'
import type { TestContext } from 'node:test'
import { missingPrerequisite } from '../../helpers/services.js'

export interface Namespace {
  /** The host's address on the pair: what a client in the namespace connects to. */
  hostAddress: string
  /** The client's address, as the server sees it. */
  clientAddress: string
  /** Runs `node -e script` inside the namespace (stdin closed) and resolves with its stdout; rejects on a non-zero exit. */
  node(script: string, args?: string[]): Promise<string>
  /** With `ipv6Subnets`: the IPv6 addresses of the pair (undefined without). */
  ipv6: Ipv6Addresses | undefined
}

export interface Ipv6Addresses {
  /** The host's address on the pair. */
  hostAddress: string
  /** One address in each of `ipv6Subnets` /64s of one /48, all on the namespace's side. */
  subnetAddresses: string[]
  /** An address of the namespace's side in another /48. */
  otherSiteAddress: string
}

let made = 0
const live = new Set<string>()
/**
 * The third byte of this process's 10.231.x.0/24 (and of its IPv6 /32, fd31:x::/32): from the pid,
 * unique among concurrent test processes but by chance; TEST_NETNS_SUBNET pins it (a machine whose
 * users share out the addresses), TEST_NETNS_PREFIX the namespaces' names (default `as-`).
 */
const SUBNET = Number(process.env.TEST_NETNS_SUBNET ?? (process.pid % 250) + 1)
const NAME_PREFIX = process.env.TEST_NETNS_PREFIX ?? 'as-'

function remove(name: string): void {
  // Deleting the namespace deletes the veth pair with it.
  try {
    execFileSync('ip', ['netns', 'delete', name], { stdio: 'ignore' })
  } catch {
    // already gone
  }
  live.delete(name)
}

process.once('exit', () => {
  for (const name of live) remove(name)
})

/**
 * Makes a namespace for `t` (undefined, having skipped loudly or failed under REQUIRE_SERVICES, when
 * this is not root); with `ipv6Subnets`, IPv6 addresses too (Namespace.ipv6).
 */
export function useNamespace(t: TestContext, { ipv6Subnets }: { ipv6Subnets?: number } = {}): Namespace | undefined {
  if (process.getuid?.() !== 0) return missingPrerequisite(t, 'a network namespace needs root (ip netns add)') || undefined
  // Unique among concurrent test processes and within one: the pid picks the /24, a counter the /30 in it.
  const n = made++
  const base = `10.231.${SUBNET}.${(n % 63) * 4}`.split('.')
  const address = (host: number) => [...base.slice(0, 3), Number(base[3]) + host].join('.')
  const id = `${process.pid.toString(36)}${n.toString(36)}`
  const name = `${NAME_PREFIX}${id}`
  const [hostSide, nsSide] = [`ash${id}`, `asn${id}`]
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] })
  live.add(name)
  t.after(() => remove(name))
  ip('netns', 'add', name)
  ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nsSide)
  ip('link', 'set', nsSide, 'netns', name)
  ip('addr', 'add', `${address(1)}/30`, 'dev', hostSide)
  ip('link', 'set', hostSide, 'up')
  ip('netns', 'exec', name, 'ip', 'addr', 'add', `${address(2)}/30`, 'dev', nsSide)
  ip('netns', 'exec', name, 'ip', 'link', 'set', nsSide, 'up')
  ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up')
  const ipv6 = ipv6Subnets === undefined ? undefined : addIpv6(name, hostSide, nsSide, base.slice(2, 4).map(Number), ipv6Subnets)
  return {
    ipv6,
    hostAddress: address(1),
    clientAddress: address(2),
    node: (script, args = []) =>
      new Promise((resolve, reject) => {
        const child = spawn('ip', ['netns', 'exec', name, process.execPath, '-e', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
        let out = ''
        let err = ''
        child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s))
        child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s))
        const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
        child.once('close', (code) => {
          clearTimeout(timer)
          if (code === 0) resolve(out)
          else reject(new Error(`node in namespace ${name} exited ${code}: ${err}`))
        })
      }),
  }
}

/**
 * The pair's IPv6 addresses, in three /48s of fd31:<subnet>::/32 picked by the IPv4 /30 (unique in
 * the same way): the pair's own (host ::1, namespace ::2, a /64), the crowded one (fd31:x:y:<n>::2
 * on the namespace's side, one /64 each) and another (::2 in it), both routed back to the
 * namespace from the host. Without duplicate address detection, so that each can be bound at once.
 */
function addIpv6(name: string, hostSide: string, nsSide: string, [subnet, fourth]: number[], subnets: number): Ipv6Addresses {
  const site = (i: number) => `fd31:${subnet}:${((fourth! / 4) * 3 + i).toString(16)}`
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] })
  const addresses: Ipv6Addresses = {
    hostAddress: `${site(0)}::1`,
    subnetAddresses: Array.from({ length: subnets }, (_, i) => `${site(1)}:${(i + 1).toString(16)}::2`),
    otherSiteAddress: `${site(2)}::2`,
  }
  ip('-6', 'addr', 'add', `${addresses.hostAddress}/64`, 'dev', hostSide, 'nodad')
  for (const routed of [site(1), site(2)]) ip('-6', 'route', 'add', `${routed}::/48`, 'via', `${site(0)}::2`, 'dev', hostSide)
  const batch = [
    `addr add ${site(0)}::2/64 dev ${nsSide} nodad`,
    ...[...addresses.subnetAddresses, addresses.otherSiteAddress].map((address) => `addr add ${address}/128 dev ${nsSide} nodad`),
  ]
  execFileSync('ip', ['-6', '-n', name, '-batch', '-'], { input: `${batch.join('\n')}\n`, stdio: ['pipe', 'ignore', 'pipe'] })
  return addresses
}

/**
 * A script for Namespace.node: sends each request target of argv[2] (a JSON array of
 * [method, target, headers]) as raw HTTP/1.1 to argv[3]:argv[4], one connection each, so that no
 * client normalises a path; prints a JSON array of status codes (0: the connection was refused).
 */
export const RAW_REQUESTS_SCRIPT = `
const net = require('node:net')
const [requests, host, port] = [JSON.parse(process.argv[1]), process.argv[2], Number(process.argv[3])]
const send = ([method, target, headers]) => new Promise((resolve) => {
  const socket = net.connect({ host, port })
  let data = ''
  socket.setTimeout(10000, () => socket.destroy())
  socket.on('connect', () => {
    const lines = [method + ' ' + target + ' HTTP/1.1', 'Host: ' + host + ':' + port, 'Connection: close']
    for (const [k, v] of Object.entries(headers)) lines.push(k + ': ' + v)
    socket.write(lines.join('\\r\\n') + '\\r\\n\\r\\n')
  })
  socket.on('data', (chunk) => (data += chunk))
  socket.on('error', () => resolve(0))
  socket.on('close', () => resolve(Number(/^HTTP\\/1\\.1 (\\d{3})/.exec(data)?.[1] ?? 0)))
})
;(async () => {
  const statuses = []
  for (const request of requests) statuses.push(await send(request))
  process.stdout.write(JSON.stringify(statuses))
})()
`
