import assert from 'node:assert/strict'
import { test } from 'node:test'
import { addressIdentity } from '../../src/http/client-address.js'

test('IPv4 addresses are their own identity; IPv6 ones are grouped by /64', () => {
  assert.equal(addressIdentity('203.0.113.7'), 'a:203.0.113.7')
  assert.equal(addressIdentity('::ffff:203.0.113.7'), 'a:203.0.113.7')
  assert.equal(addressIdentity('2001:db8:1:2:aaaa::1'), 'a:2001:db8:1:2::/64')
  assert.equal(addressIdentity('2001:db8:1:2:ffff:ffff:ffff:ffff'), 'a:2001:db8:1:2::/64')
  assert.equal(addressIdentity('2001:0db8:0001:0002::'), 'a:2001:db8:1:2::/64')
  assert.equal(addressIdentity('::1'), 'a:0:0:0:0::/64')
  assert.notEqual(addressIdentity('2001:db8:1:3::1'), addressIdentity('2001:db8:1:2::1'))
})
