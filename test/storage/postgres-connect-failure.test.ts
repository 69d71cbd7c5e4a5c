/** describeConnectFailure: the cause of a failed PostgreSQL start, for every shape pg and Node report it in. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { StorageUnavailableError } from '../../src/shared/outages.js'
import { describeConnectFailure, serverAddress } from '../../src/storage/postgres/connection.js'

const URL = 'postgres://app:s3cret@db.internal:6543/store'
const withCode = (message: string, code: string) => Object.assign(new Error(message), { code })

test('serverAddress: host:port as pg reads the URL', () => {
  assert.equal(serverAddress(URL), 'db.internal:6543')
  assert.equal(serverAddress('postgres://app@db/store'), 'db:5432')
  assert.equal(serverAddress('postgresql:///store?host=/var/run/postgresql'), '/var/run/postgresql:5432')
})

test('refused, timed out, unresolvable, unreachable, refused by the server: each says so, with host:port and no password', () => {
  const cases: Array<[unknown, RegExp]> = [
    [
      new StorageUnavailableError(withCode('connect ECONNREFUSED 10.0.0.9:6543', 'ECONNREFUSED')),
      /^PostgreSQL at db\.internal:6543 refused the connection/,
    ],
    // Node's happy-eyeballs connect: one failure per address.
    [
      new StorageUnavailableError(new AggregateError([withCode('a', 'ECONNREFUSED'), withCode('b', 'ECONNREFUSED')])),
      /refused the connection/,
    ],
    [
      new StorageUnavailableError(new Error('timeout expired')),
      /^PostgreSQL at db\.internal:6543 did not answer within 2 s: the connection timed out$/,
    ],
    [new StorageUnavailableError(new Error('Connection terminated due to connection timeout')), /did not answer within 2 s/],
    [new StorageUnavailableError(withCode('connect ETIMEDOUT', 'ETIMEDOUT')), /did not answer: the connection timed out \(ETIMEDOUT\)/],
    [
      new StorageUnavailableError(withCode('getaddrinfo ENOTFOUND db.internal', 'ENOTFOUND')),
      /the host name cannot be resolved \(ENOTFOUND\)/,
    ],
    [new StorageUnavailableError(withCode('connect EHOSTUNREACH', 'EHOSTUNREACH')), /is unreachable \(EHOSTUNREACH\)/],
    [
      withCode('password authentication failed for user "app"', '28P01'),
      /^PostgreSQL at db\.internal:6543: password authentication failed for user "app" \(SQLSTATE 28P01\)$/,
    ],
    [withCode('database "store" does not exist', '3D000'), /database "store" does not exist \(SQLSTATE 3D000\)/],
    // A statement timeout is not a connect timeout.
    [
      new Error('migration 001_init.sql failed: canceling statement due to statement timeout', {
        cause: withCode('canceling statement due to statement timeout', '57014'),
      }),
      /migration 001_init\.sql failed: .*\(SQLSTATE 57014\)/,
    ],
  ]
  for (const [error, expected] of cases) {
    const line = describeConnectFailure(error, URL)
    assert.match(line, expected)
    assert.doesNotMatch(line, /s3cret/)
  }
})
