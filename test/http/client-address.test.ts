import assert from 'node:assert/strict'
import { test } from 'node:test'
import { addressIdentity, addressSite } from '../../src/auth/address-identity.js'
import { createClientAddress, parseAddress } from '../../src/http/client-address.js'

const identityOf = (value: string) => addressIdentity(parseAddress(value)!)

test('IPv4 addresses are their own identity; IPv6 ones are grouped by /64', () => {
  assert.equal(identityOf('203.0.113.7'), 'a:203.0.113.7')
  assert.equal(identityOf('::ffff:203.0.113.7'), 'a:203.0.113.7')
  assert.equal(identityOf('2001:db8:1:2:aaaa::1'), 'a:2001:db8:1:2::/64')
  assert.equal(identityOf('2001:db8:1:2:ffff:ffff:ffff:ffff'), 'a:2001:db8:1:2::/64')
  assert.equal(identityOf('2001:0db8:0001:0002::'), 'a:2001:db8:1:2::/64')
  assert.equal(identityOf('2001:DB8:1:2::9'), 'a:2001:db8:1:2::/64')
  assert.equal(identityOf('::1'), 'a:0:0:0:0::/64')
  assert.equal(identityOf('::198.51.100.1'), 'a:0:0:0:0::/64')
  assert.notEqual(identityOf('2001:db8:1:3::1'), identityOf('2001:db8:1:2::1'))
})

test("a connection's site: an IPv4 address is its own; IPv6 addresses are grouped by /48, every /64 of it together", () => {
  const siteOf = (value: string) => addressSite(parseAddress(value)!)
  assert.equal(siteOf('203.0.113.7'), '203.0.113.7')
  assert.notEqual(siteOf('203.0.113.8'), siteOf('203.0.113.7'))
  assert.equal(siteOf('::ffff:203.0.113.7'), '203.0.113.7')
  assert.equal(siteOf('2001:db8:1:2:aaaa::1'), '2001:db8:1::/48')
  assert.equal(siteOf('2001:db8:1:ffff::1'), '2001:db8:1::/48')
  assert.equal(siteOf('2001:0DB8:0001::'), '2001:db8:1::/48')
  assert.notEqual(siteOf('2001:db8:2::1'), siteOf('2001:db8:1::1'))
  assert.equal(siteOf('::1'), '0:0:0::/48')
})

test('every spelling of an IPv4-mapped address is the IPv4 address', () => {
  for (const mapped of [
    '::ffff:198.51.100.1',
    '::FFFF:198.51.100.1',
    '::ffff:c633:6401',
    '::FFFF:C633:6401',
    '0:0:0:0:0:ffff:c633:6401',
    '0:0:0:0:0:FFFF:198.51.100.1',
    '0000:0000:0000:0000:0000:ffff:c633:6401',
    '[::ffff:c633:6401]:443',
  ]) {
    assert.equal(parseAddress(mapped), '198.51.100.1', mapped)
  }
})

test('a port is dropped: IPv4 a.b.c.d:port and bracketed IPv6 [addr]:port', () => {
  assert.equal(parseAddress('1.2.3.4:5555'), '1.2.3.4')
  assert.equal(parseAddress('1.2.3.4:6666'), '1.2.3.4')
  assert.equal(parseAddress('[2001:db8::1]:443'), '2001:db8::1')
  assert.equal(parseAddress('[2001:DB8:0::1]'), '2001:db8::1')
  assert.equal(parseAddress('[::1]:8080'), '::1')
})

test('a value that is not an address is no address', () => {
  for (const value of [
    'garbage-1',
    'unknown',
    '',
    '999.1.1.1',
    '1.2.3.4:',
    '1.2.3.4:port',
    '1.2.3',
    '127.1',
    '2130706433',
    '[1.2.3.4]:80',
    '[::1',
    '::1]:80',
    'example.com',
    'x'.repeat(5000),
  ]) {
    assert.equal(parseAddress(value), undefined, JSON.stringify(value.slice(0, 40)))
  }
})

/** A request as the guard sees it, with a log that records its warnings. */
function requestFrom(ip: string, peer: string, warnings: unknown[]) {
  return { ip, socket: { remoteAddress: peer }, log: { warn: (...args: unknown[]) => warnings.push(args) } } as never
}

test('a forwarded value that is not an address is limited as the proxy that sent it, reported once', () => {
  const clientAddress = createClientAddress()
  const warnings: unknown[] = []
  assert.equal(clientAddress(requestFrom('198.51.100.1', '10.0.0.7', warnings)), '198.51.100.1')
  assert.equal(clientAddress(requestFrom('1.2.3.4:5555', '10.0.0.7', warnings)), '1.2.3.4')
  assert.equal(warnings.length, 0, 'addresses are not reported')
  for (let i = 0; i < 1000; i++) {
    assert.equal(clientAddress(requestFrom(`garbage-${i}`, '10.0.0.7', warnings)), '10.0.0.7')
  }
  assert.equal(clientAddress(requestFrom('garbage', '::ffff:10.0.0.8', warnings)), '10.0.0.8')
  assert.equal(warnings.length, 1, 'one warning for the whole flood')
  assert.match(JSON.stringify(warnings[0]), /"forwardedFor":"garbage-0","proxy":"10.0.0.7"/)
})
