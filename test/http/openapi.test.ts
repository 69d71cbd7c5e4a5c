import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import { ERROR_STATUS } from '../../src/http/errors.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'

describe('OpenAPI document', () => {
  let t: TestApp
  let doc: any
  before(async () => {
    t = await buildTestApp({ env: { PUBLIC_BASE_URL: 'http://127.0.0.1:9999', ANIMAL_STORE_ENV: 'staging' } })
    const res = await t.app.inject({ url: '/v1/openapi.json' })
    assert.equal(res.statusCode, 200)
    doc = res.json()
  })
  after(() => t.close())

  test('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc)
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2))
    assert.equal(doc.openapi, '3.1.0')
    assert.equal(doc.info.version, '1.0.0')
  })

  test('lists the relative server first, then the public address, production and staging, each with /v1', () => {
    const urls = doc.servers.map((s: { url: string }) => s.url)
    assert.deepEqual(urls, [
      '/v1',
      'http://127.0.0.1:9999/v1',
      'https://api.animal-store.example/v1',
      'https://staging.api.animal-store.example/v1',
    ])
  })

  test('has the three operations, getPet deprecated, bearer security', () => {
    assert.deepEqual(Object.keys(doc.paths).sort(), ['/pets', '/pets/{petId}'])
    assert.equal(doc.paths['/pets'].get.operationId, 'listPets')
    assert.equal(doc.paths['/pets'].post.operationId, 'createPet')
    assert.equal(doc.paths['/pets/{petId}'].get.operationId, 'getPet')
    assert.equal(doc.paths['/pets/{petId}'].get.deprecated, true)
    assert.deepEqual(doc.security, [{ bearerAuth: [] }])
    assert.equal(doc.components.securitySchemes.bearerAuth.scheme, 'bearer')
  })

  test('schemas are the spec shapes; int64 fields are documented as such', () => {
    const { Pet, NewPet, PetStatus, Error: ErrorSchema } = doc.components.schemas
    assert.deepEqual(PetStatus.enum, ['available', 'pending', 'sold'])
    assert.deepEqual(NewPet.required.sort(), ['categoryId', 'name'])
    assert.equal(NewPet.additionalProperties, false)
    assert.equal(Pet.properties.id.format, 'int64')
    assert.equal(Pet.properties.categoryId.format, 'int64')
    assert.deepEqual(ErrorSchema.required.sort(), ['code', 'message', 'status'])
    assert.deepEqual(ErrorSchema.properties.code.enum.sort(), Object.keys(ERROR_STATUS).sort())
  })

  test('documents limits, statuses and rate-limit headers', () => {
    const list = doc.paths['/pets'].get
    const limit = list.parameters.find((p: { name: string }) => p.name === 'limit')
    assert.deepEqual([limit.schema.minimum, limit.schema.maximum, limit.schema.default], [1, 100, 20])
    assert.ok(list.parameters.find((p: { name: string }) => p.name === 'after'))
    for (const s of ['200', '400', '401', '429']) assert.ok(list.responses[s], s)
    assert.ok(list.responses['200'].headers['X-RateLimit-Remaining'])
    assert.ok(list.responses['429'].headers['Retry-After'])
    const create = doc.paths['/pets'].post
    for (const s of ['201', '400', '401', '413', '415', '429']) assert.ok(create.responses[s], s)
    assert.ok(create.responses['201'].headers.Location)
    const get = doc.paths['/pets/{petId}'].get
    for (const s of ['200', '401', '404', '410']) assert.ok(get.responses[s], s)
    for (const s of ['200', '401', '404', '410', '429']) assert.ok(get.responses[s].headers.Sunset, `getPet ${s} documents Sunset`)
    for (const code of Object.keys(ERROR_STATUS)) assert.match(doc.info.description, new RegExp(`\`${code}\``))
  })
})
