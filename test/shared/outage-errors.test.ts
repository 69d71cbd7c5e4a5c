// The outage errors' messages: what a log line, the CLI and a failing test print (the cause is not
// printed by them). A CI run's failing test said only "storage unavailable".
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { StorageFaultError, StorageUnavailableError } from '../../src/shared/outages.js'

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code })

test('StorageUnavailableError names its cause: the message, else the code, else the first inner error', () => {
  assert.equal(new StorageUnavailableError(new Error('timeout expired')).message, 'storage unavailable: timeout expired')
  assert.equal(
    new StorageUnavailableError(new AggregateError([withCode('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED')])).message,
    'storage unavailable: connect ECONNREFUSED 127.0.0.1:1',
  )
  assert.equal(
    new StorageUnavailableError(Object.assign(new AggregateError([]), { code: 'ECONNREFUSED' })).message,
    'storage unavailable: ECONNREFUSED',
  )
  assert.equal(new StorageUnavailableError('down').message, 'storage unavailable: down')
  const error = new Error('too many clients already')
  assert.equal(new StorageUnavailableError(error).cause, error)
})

test('a fault keeps its own message, with the engine’s', () => {
  assert.equal(new StorageFaultError('disk_full', new Error('could not extend file')).message.endsWith(': could not extend file'), true)
})
