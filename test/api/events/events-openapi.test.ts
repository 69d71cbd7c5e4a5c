/**
 * The event log in the public OpenAPI document: a `webhooks` section (OpenAPI 3.1) with one entry
 * per type of the closed list, in its order, each a payload `{type, timestamp, data}` whose example
 * is valid for its schema; and what GET /v1/events lists is valid for the payload of its type.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { EVENT_TYPES } from '../../../src/events/event-types.js'
import { bearer, buildTestApp } from '../../helpers/app.js'

/** A parsed OpenAPI document. */
type Doc = any

function compiler(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/)
  ajv.addFormat('int64', { type: 'number', validate: (v: number) => Number.isInteger(v) })
  ajv.addKeyword('example')
  for (const [name, schema] of Object.entries(doc.components.schemas as Record<string, object>))
    ajv.addSchema({ ...schema, $id: undefined }, `#/components/schemas/${name}`)
  return (schema: object) => ajv.compile(schema)
}

describe('the event log in the public document', () => {
  test('webhooks: every event type, in order, its payload schema and a valid example; the listing matches them', async (t) => {
    const app = await buildTestApp(t)
    const doc: Doc = (await app.app.inject({ url: '/v1/openapi.json' })).json()
    assert.equal((await new Validator().validate(doc)).valid, true)
    assert.deepEqual(Object.keys(doc.webhooks), [...EVENT_TYPES])
    const compile = compiler(doc)
    const validators = new Map<string, ReturnType<typeof compile>>()
    for (const type of EVENT_TYPES) {
      const content = doc.webhooks[type].post.requestBody.content['application/json']
      assert.deepEqual(content.schema.required, ['type', 'timestamp', 'data'])
      const validate = compile(content.schema)
      assert.ok(validate(content.example), `${type}: its example is valid: ${JSON.stringify(validate.errors)}`)
      assert.equal(validate({ ...content.example, type: 'other' }), false, `${type}: its type is fixed`)
      validators.set(type, validate)
    }

    const key = bearer(await app.key({ plan: 'pro' }))
    const post = (url: string, payload: unknown) =>
      app.app.inject({ method: 'POST', url, headers: { ...key, 'content-type': 'application/json' }, payload: JSON.stringify(payload) })
    const pet = (await post('/v1/pets', { name: 'Rex', categoryId: 7, status: 'available' })).json()
    const order = (await post('/v1/store/orders', { petId: pet.id })).json()
    await post(`/v1/store/orders/${order.id}/complete`, undefined)
    const listed = (await app.app.inject({ url: '/v1/events', headers: key })).json() as Array<{ id: string; type: string }>
    assert.deepEqual(
      listed.map((e) => e.type),
      ['pet.created', 'order.placed', 'order.completed'],
    )
    for (const { id, ...payload } of listed) {
      const validate = validators.get(payload.type)!
      assert.ok(validate(payload), `${payload.type}: ${JSON.stringify(validate.errors)}`)
    }
  })
})
