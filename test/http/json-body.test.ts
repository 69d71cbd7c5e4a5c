/**
 * The JSON body parser (src/http/json-body.ts): a key an object names twice is refused whatever
 * its values, as docs/api.md says (lossless-json alone keeps one of two equal values), through
 * POST /v1/pets and on the function that finds it.
 */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import fc from 'fast-check'
import { firstRepeatedKey, parseJsonBody } from '../../src/http/json-body.js'
import { bearer, buildSuiteApp } from '../helpers/app.js'
import { assertError } from '../helpers/errors.js'

describe('repeated keys in a body', () => {
  const t = buildSuiteApp()
  let auth: Record<string, string>
  before(async () => {
    auth = bearer(await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
  })
  const post = (payload: string) =>
    t.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...auth, 'content-type': 'application/json' }, payload })

  test('a key repeated with the same value is 400 naming the key, as with another value; nothing is created', async () => {
    const bodies = [
      '{"name":"a","name":"a","categoryId":1}',
      '{"name":"a","categoryId":1,"categoryId":1}',
      // The same key however it is spelled: "\u0061" is "a".
      '{"name":"a","n\\u0061me":"a","categoryId":1}',
      '{"name":"a","categoryId":1,"status":"available","status":"available"}',
      '{"name":"a","name":"b","categoryId":1}',
    ]
    for (const body of bodies) assertError(await post(body), 400, 'invalid_request', /Duplicate key '(name|categoryId|status)'/)
    const list = await t.app.inject({ url: '/v1/pets', headers: auth })
    assert.deepEqual(list.json(), [], 'no animal was created')
  })

  test('keys that only look alike are not repeats: the same key in two objects, a value equal to a key', async () => {
    assert.equal((await post('{"name":"name","categoryId":1}')).statusCode, 201)
    assert.deepEqual(parseJsonBody(Buffer.from('[{"a":1},{"a":1}]')), [{ a: 1 }, { a: 1 }])
    assert.deepEqual(parseJsonBody(Buffer.from('{"a":{"a":{"a":"a"}},"b":["a","a"]}')), { a: { a: { a: 'a' } }, b: ['a', 'a'] })
    assert.deepEqual(parseJsonBody(Buffer.from('{"a\\"":1,"a":2,"x":"\\\\","y":"{\\"a\\":1}"}')), { 'a"': 1, a: 2, x: '\\', y: '{"a":1}' })
  })

  test('a repeat in a nested object is refused too, and its position is where the repeated key starts', () => {
    assert.throws(() => parseJsonBody(Buffer.from('{"a":[{"b":{}, "b":{}}]}')), /Duplicate key 'b' encountered at position 16/)
    assert.deepEqual(firstRepeatedKey('{"a":[{"b":{}, "b":{}}]}'), { key: 'b', position: 16 })
  })

  test('property: any object with distinct keys has no repeat; the same object with one key written again has it', () => {
    const value = fc.letrec((tie) => ({
      any: fc.oneof({ depthSize: 'small' }, fc.string(), fc.integer(), fc.constant(null), tie('array'), tie('object')),
      array: fc.array(tie('any'), { maxLength: 3 }),
      object: fc.dictionary(fc.string({ maxLength: 4 }), tie('any'), { maxKeys: 4 }),
    })).object
    fc.assert(
      fc.property(value, fc.nat(), (object, pick) => {
        const text = JSON.stringify(object)
        assert.equal(firstRepeatedKey(text), undefined)
        const keys = Object.keys(object)
        if (keys.length === 0) return
        const key = keys[pick % keys.length]!
        const repeated = `${text.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(object[key])}}`
        assert.equal(firstRepeatedKey(repeated)?.key, key)
        assert.throws(() => parseJsonBody(Buffer.from(repeated)), /Duplicate key/)
      }),
    )
  })
})
