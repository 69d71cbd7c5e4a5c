/** POST /v1/pets (createPet, api/pets/create.ts) through app.inject: the answer, the body's validation, the media types. */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { bearer, buildSuiteApp } from '../../helpers/app.js'
import { assertError } from '../../helpers/errors.js'

describe('createPet', () => {
  let auth: Record<string, string>
  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...auth, 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
    })

  const t = buildSuiteApp()
  before(async () => {
    auth = bearer(await t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
  })

  test('201 with the assigned id, the body and a Location header', async () => {
    const res = await post({ name: 'Rex', categoryId: 7, status: 'available' })
    assert.equal(res.statusCode, 201)
    const pet = res.json()
    assert.deepEqual(Object.keys(pet), ['id', 'name', 'categoryId', 'status'])
    assert.equal(typeof pet.id, 'number')
    assert.deepEqual({ ...pet, id: 0 }, { id: 0, name: 'Rex', categoryId: 7, status: 'available' })
    assert.equal(res.headers.location, `/v1/pets/${pet.id}`)
  })

  test('an absent status is omitted, never null', async () => {
    const res = await post({ name: 'Tom', categoryId: 1 })
    assert.equal(res.statusCode, 201)
    assert.equal(res.body.includes('status'), false)
    const got = await t.app.inject({ url: res.headers.location as string, headers: auth })
    assert.equal(got.body.includes('status'), false)
    assert.equal(got.body.includes('null'), false)
  })

  test('categoryId is int64 and exact beyond 2^53, through parse, store and serialize', async () => {
    for (const literal of ['9007199254740993', '9223372036854775807', '-9223372036854775808', '-9007199254740993']) {
      const res = await post(`{"name":"Big","categoryId":${literal}}`)
      assert.equal(res.statusCode, 201, res.body)
      assert.match(res.body, new RegExp(`"categoryId":${literal}[,}]`))
      const got = await t.app.inject({ url: res.headers.location as string, headers: auth })
      assert.match(got.body, new RegExp(`"categoryId":${literal}[,}]`))
      const list = await t.app.inject({ url: `/v1/pets?limit=1&after=${Number(res.json().id) - 1}`, headers: auth })
      assert.match(list.body, new RegExp(`"categoryId":${literal}[,}]`))
    }
  })

  test('categoryId outside int64, fractional, or not a number is 400 naming the field', async () => {
    for (const literal of [
      '9223372036854775808',
      '-9223372036854775809',
      '1.5',
      '"5"',
      'true',
      'null',
      '1e400',
      '9007199254740993.0',
      '[1]',
      '{}',
    ]) {
      const res = await post(`{"name":"X","categoryId":${literal}}`)
      assertError(res, 400, 'invalid_request', 'categoryId')
    }
  })

  test('integers are written one way: an exponent or a fraction is 400, as in a query or a path', async () => {
    for (const literal of ['1e3', '1.0', '1E2', '10e-1', '-0.0']) {
      assertError(
        await post(`{"name":"Exp","categoryId":${literal}}`),
        400,
        'invalid_request',
        /categoryId must be an int64 integer .* plain decimal/,
      )
    }
    assertError(await t.app.inject({ url: '/v1/pets?limit=005', headers: auth }), 400, 'invalid_request', /limit .* plain decimal/)
    assertError(await t.app.inject({ url: '/v1/pets/007', headers: auth }), 400, 'invalid_request', /petId .* plain decimal/)
    assertError(await t.app.inject({ url: '/v1/pets?after=01', headers: auth }), 400, 'invalid_request', /after/)
    assert.equal((await post('{"name":"Zero","categoryId":0}')).statusCode, 201)
    assert.equal((await t.app.inject({ url: '/v1/pets?limit=10', headers: auth })).statusCode, 200)
  })

  test('zero has one spelling: -0 is 400 in a body, a query and a path, and nothing is stored', async () => {
    const before = (await t.app.inject({ url: '/v1/pets?limit=100', headers: auth })).json().length
    assertError(
      await post('{"name":"Minus zero","categoryId":-0}'),
      400,
      'invalid_request',
      /^categoryId must be an int64 integer .* written in plain decimal$/,
    )
    assert.equal((await t.app.inject({ url: '/v1/pets?limit=100', headers: auth })).json().length, before)
    assertError(await t.app.inject({ url: '/v1/pets?after=-0', headers: auth }), 400, 'invalid_request', /after .* plain decimal/)
    assertError(await t.app.inject({ url: '/v1/pets/-0', headers: auth }), 400, 'invalid_request', /petId .* plain decimal/)
    assert.equal((await post('{"name":"Minus one","categoryId":-1}')).json().categoryId, -1)
  })

  test('a name of only white space is 400; other names are stored exactly as sent', async () => {
    for (const name of [' ', '   ', '\t\n', '\u00a0\u2003']) {
      assertError(await post({ name, categoryId: 1 }), 400, 'invalid_request', /name must not be only white space/)
    }
    const padded = await post({ name: '  Rex ', categoryId: 1 })
    assert.equal(padded.statusCode, 201)
    assert.equal(padded.json().name, '  Rex ')
  })

  test('every problem of a body is reported in one answer, in plain words', async () => {
    const body = assertError(await post({ categoryId: 'x', status: 'bad' }), 400, 'invalid_request')
    assert.match(body.message, /^3 problems: /)
    assert.match(body.message, /name is required/)
    assert.match(body.message, /categoryId must be an int64 integer/)
    assert.match(body.message, /status must be one of available, pending, sold/)
    assert.doesNotMatch(body.message, /must NOT|must have/, 'no validator jargon')
    assertError(await post({ name: '', categoryId: 1 }), 400, 'invalid_request', /^name must not be empty$/)
    assertError(await post({ name: 'x'.repeat(201), categoryId: 1 }), 400, 'invalid_request', /^name must be at most 200 characters long$/)
  })

  test('a charset other than UTF-8 is 415 naming the charset', async () => {
    assertError(
      await post('{"name":"x","categoryId":1}', { 'content-type': 'application/json; charset=latin1' }),
      415,
      'unsupported_media_type',
      /charset "latin1" is not supported/,
    )
  })

  test('missing, empty or mistyped fields are 400 naming the field', async () => {
    assertError(await post({ categoryId: 1 }), 400, 'invalid_request', /name is required/)
    assertError(await post({ name: 'x' }), 400, 'invalid_request', /categoryId is required/)
    assertError(await post({ name: '', categoryId: 1 }), 400, 'invalid_request', /name/)
    assertError(await post({ name: 5, categoryId: 1 }), 400, 'invalid_request', /name/)
    assertError(await post({ name: 'x'.repeat(201), categoryId: 1 }), 400, 'invalid_request', /name/)
    assertError(
      await post({ name: 'x', categoryId: 1, status: 'lost' }),
      400,
      'invalid_request',
      /status must be one of available, pending, sold/,
    )
    assertError(await post({ name: 'x', categoryId: 1, status: null }), 400, 'invalid_request', /status/)
  })

  test('a client-sent id and unknown fields are rejected, not stripped', async () => {
    assertError(await post({ id: 5, name: 'x', categoryId: 1 }), 400, 'invalid_request', /id is assigned by the service/)
    assertError(await post({ name: 'x', categoryId: 1, color: 'red' }), 400, 'invalid_request', /unknown field 'color'/)
    assertError(await post('{"name":"x","categoryId":1,"__proto__":{"admin":true}}'), 400, 'invalid_request', /__proto__/)
  })

  test('malformed, truncated, empty, non-object and duplicate-key bodies are 400', async () => {
    assertError(await post('{"name":"x",'), 400, 'invalid_request', /not valid JSON/)
    assertError(await post('{"name":"x" "categoryId":1}'), 400, 'invalid_request', /not valid JSON/)
    assertError(await post(''), 400, 'invalid_request', /empty/)
    assertError(await post('[]'), 400, 'invalid_request', /body must be a JSON object/)
    assertError(await post('null'), 400, 'invalid_request', /body/)
    assertError(await post('"text"'), 400, 'invalid_request', /body/)
    assertError(await post('{"name":"a","name":"b","categoryId":1}'), 400, 'invalid_request', /Duplicate key/)
    assertError(await post('['.repeat(8000)), 400, 'invalid_request')
    assertError(
      await post(Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])),
      400,
      'invalid_request',
      /UTF-8/,
    )
  })

  test('a wrong Content-Type is 415 and a body over 16 KiB is 413', async () => {
    assertError(await post('name=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type')
    assertError(await post('{}', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type')
    assertError(
      await post('{"name":"x","categoryId":1}', { 'content-type': 'application/json; charset=latin1' }),
      415,
      'unsupported_media_type',
    )
    const ok = await post('{"name":"x","categoryId":1}', { 'content-type': 'application/json; charset=utf-8' })
    assert.equal(ok.statusCode, 201)
    assertError(await post(JSON.stringify({ name: 'x'.repeat(17 * 1024), categoryId: 1 })), 413, 'payload_too_large')
  })

  test('no body at all is 400', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/pets', headers: auth })
    assertError(res, 400, 'invalid_request', /body/)
  })

  test('nothing half-written: a rejected body creates no pet', async () => {
    const before = (await t.app.inject({ url: '/v1/pets?limit=100', headers: auth })).json().length
    await post({ name: 'x', categoryId: 'nope' })
    await post('{"name":"x","categoryId":1')
    const afterCount = (await t.app.inject({ url: '/v1/pets?limit=100', headers: auth })).json().length
    assert.equal(afterCount, before)
  })
})
