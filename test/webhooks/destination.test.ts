/**
 * Where a webhook may be sent (src/webhooks/destination.ts): every spelling of a non-public target
 * is refused, naming why, and public ones pass. Host names are resolved by a resolver the test
 * gives, never by the machine's DNS.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type DestinationRules, forbiddenAddress, judgeDestination } from '../../src/webhooks/destination.js'

/** A resolver of a few names, as DNS would answer them; any other name does not exist. */
const NAMES: Record<string, string[]> = {
  'loopback.test': ['127.0.0.1'],
  'localhost.test': ['::1'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['93.184.215.14', '10.0.0.7'],
  'mapped.test': ['::ffff:192.168.1.20'],
  'public.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
}
const rules = (allowPrivateNetworks = false): DestinationRules => ({
  allowPrivateNetworks,
  resolve: async (host) => {
    const found = NAMES[host]
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
    return found
  },
})

/** [URL, what the refusal says] for every form of a target the service must not call. */
const REFUSED: Array<[string, RegExp]> = [
  ['https://127.0.0.1/hook', /loopback address: 127\.0\.0\.1/],
  ['https://127.255.0.9:8443/hook', /loopback address/],
  ['https://2130706433/hook', /loopback address: 127\.0\.0\.1/], // decimal
  ['https://0x7f000001/hook', /loopback address: 127\.0\.0\.1/], // hex
  ['https://0177.0.0.1/hook', /loopback address: 127\.0\.0\.1/], // octal
  ['https://0x7f.0.0.1/hook', /loopback address: 127\.0\.0\.1/], // hex part
  ['https://127.1/hook', /loopback address: 127\.0\.0\.1/], // short form
  ['https://%31%32%37.0.0.1/hook', /loopback address: 127\.0\.0\.1/], // percent-encoded
  ['https://[::1]/hook', /loopback address: ::1/],
  ['https://[0:0:0:0:0:0:0:1]/hook', /loopback address: ::1/],
  ['https://[::ffff:127.0.0.1]/hook', /loopback address mapped into IPv6 \(127\.0\.0\.1\)/], // IPv4-mapped
  ['https://[::ffff:7f00:1]/hook', /loopback address mapped into IPv6/],
  ['https://[::ffff:10.1.2.3]/hook', /private address mapped into IPv6 \(10\.1\.2\.3\)/],
  ['https://[::127.0.0.1]/hook', /IPv4-compatible address \(127\.0\.0\.1\)/], // IPv4-compatible
  ['https://[64:ff9b::7f00:1]/hook', /reserved for special use/], // NAT64 of 127.0.0.1
  ['https://10.0.0.1/hook', /private address: 10\.0\.0\.1/],
  ['https://172.16.5.4/hook', /private address/],
  ['https://192.168.0.10/hook', /private address/],
  ['https://169.254.169.254/latest/meta-data/', /link-local address .*169\.254\.169\.254/], // cloud metadata
  ['https://[fe80::1]/hook', /link-local address/],
  ['https://[fd12:3456:789a::1]/hook', /unique-local address/],
  ['https://[fec0::1]/hook', /site-local address/],
  ['https://0.0.0.0/hook', /unspecified address/],
  ['https://0/hook', /unspecified address/],
  ['https://[::]/hook', /unspecified address/],
  ['https://224.0.0.1/hook', /multicast address/],
  ['https://[ff02::1]/hook', /multicast address/],
  ['https://255.255.255.255/hook', /broadcast address/],
  ['https://100.64.0.1/hook', /shared \(carrier-grade NAT\) address/],
  ['https://192.0.2.1/hook', /reserved for special use/],
  ['https://240.0.0.1/hook', /reserved for special use/],
  ['https://[2001:db8::1]/hook', /reserved for special use/],
  ['https://[2002:7f00:1::1]/hook', /reserved for special use/], // 6to4 of 127.0.0.1
  ['https://[4000::1]/hook', /not a global unicast address/],
  ['https://loopback.test/hook', /loopback address: loopback\.test resolves to 127\.0\.0\.1/], // a name resolving to 127.0.0.1
  ['https://localhost.test/hook', /loopback address: localhost\.test resolves to ::1/],
  ['https://metadata.test/hook', /link-local address .*metadata\.test resolves to 169\.254\.169\.254/],
  ['https://mixed.test/hook', /private address: mixed\.test resolves to 10\.0\.0\.7/], // one private address among public ones
  ['https://mapped.test/hook', /private address mapped into IPv6 .*mapped\.test resolves to ::ffff:192\.168\.1\.20/],
  ['https://missing.test/hook', /must name a host that resolves \(missing\.test: ENOTFOUND\)/],
  ['http://public.test/hook', /must use https \(got http:; http is allowed only with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true\)/],
  ['ftp://public.test/hook', /must use https/],
  ['https://user:pass@public.test/hook', /must not carry a user name or password/],
  ['https://user@public.test/hook', /must not carry a user name or password/],
  ['hooks.example.com/animal-store', /must be an absolute URL/],
  ['https://[fe80::1%25eth0]/hook', /must be an absolute URL/], // a zone id: no URL at all
]

/** Public targets: the URL as the service keeps it. */
const ALLOWED: Array<[string, string]> = [
  ['https://public.test/hook', 'https://public.test/hook'],
  ['https://PUBLIC.test:8443/a/../hook?x=1', 'https://public.test:8443/hook?x=1'],
  ['https://93.184.215.14/hook', 'https://93.184.215.14/hook'],
  ['https://[2606:4700::1111]/hook', 'https://[2606:4700::1111]/hook'],
  ['https://[::ffff:93.184.215.14]/hook', 'https://[::ffff:5db8:d70e]/hook'], // mapped: judged as the IPv4 address it carries
  ['https://1572394766/hook', 'https://93.184.215.14/hook'], // a public address in decimal
]

describe('a webhook destination', () => {
  for (const [url, why] of REFUSED)
    test(`refused: ${url}`, async () => {
      const verdict = await judgeDestination(url, rules())
      assert.ok('problem' in verdict, `${url} was allowed`)
      assert.match(verdict.problem, why)
    })

  for (const [url, kept] of ALLOWED)
    test(`allowed: ${url}`, async () => {
      const verdict = await judgeDestination(url, rules())
      assert.ok('url' in verdict, `${url} was refused: ${'problem' in verdict ? verdict.problem : ''}`)
      assert.equal(verdict.url.href, kept)
    })

  test('WEBHOOK_ALLOW_PRIVATE_NETWORKS: http and private targets, never a name looked up, still no credentials', async () => {
    const lookedUp: string[] = []
    const open: DestinationRules = { allowPrivateNetworks: true, resolve: async (host) => (lookedUp.push(host), ['127.0.0.1']) }
    for (const url of ['http://127.0.0.1:8080/hook', 'https://[::1]/hook', 'http://loopback.test/hook', 'http://169.254.169.254/'])
      assert.ok('url' in (await judgeDestination(url, open)), url)
    assert.deepEqual(lookedUp, [])
    assert.match(String(((await judgeDestination('http://a:b@127.0.0.1/', open)) as { problem: string }).problem), /user name or password/)
    assert.match(String(((await judgeDestination('ftp://127.0.0.1/', open)) as { problem: string }).problem), /http or https URL/)
  })

  test('a name that does not answer in time is refused, not waited for', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const pending = judgeDestination('https://slow.test/hook', { allowPrivateNetworks: false, resolve: () => new Promise(() => {}) })
    t.mock.timers.tick(5_000)
    assert.deepEqual(await pending, { problem: 'must name a host that resolves (slow.test: timed out)' })
  })
})

describe('one resolved address, as a delivery judges the address it connects to', () => {
  const CASES: Array<[string, string | undefined]> = [
    ['127.0.0.1', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['::ffff:127.0.0.1', 'a loopback address mapped into IPv6 (127.0.0.1)'],
    ['10.20.30.40', 'a private address'],
    ['169.254.169.254', 'a link-local address (where cloud metadata services answer)'],
    ['fd00::1', 'a unique-local address'],
    ['0.0.0.0', 'the unspecified address'],
    ['8.8.8.8', undefined],
    ['2606:4700::1111', undefined],
    ['::ffff:8.8.8.8', undefined],
    ['not-an-address', 'not an IP address'],
  ]
  for (const [address, kind] of CASES) test(`${address}: ${kind ?? 'allowed'}`, () => assert.equal(forbiddenAddress(address), kind))
})
