import { after, before } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { bearer, openTestApp, type TestApp } from './app.js'

export type Headers = Record<string, string>
const JSON_TYPE = { 'content-type': 'application/json' }

export interface StoreSuite {
  /** The app of the describe block, built before its first test. */
  t: TestApp
  /** An Enterprise key's Authorization header, made before the first test. */
  key: Headers
  /** A request through app.inject, as `key` unless given other headers; a payload goes as JSON. */
  send(method: 'GET' | 'POST', url: string, payload?: unknown, headers?: Headers): Promise<LightMyRequestResponse>
  /** A new animal's id. */
  newPet(status?: string): Promise<number>
  /** POST /v1/store/orders for `petId`. */
  place(petId: unknown, headers?: Headers): Promise<LightMyRequestResponse>
}

/**
 * What every test file of the store's operations (test/api/orders/) starts with: one app for the
 * describe block it is called in, a key, and the calls. Call it in the block, not at a file's top.
 */
export function storeSuite(): StoreSuite {
  const suite = {} as StoreSuite
  before(async () => {
    suite.t = await openTestApp()
    suite.key = bearer(await suite.t.key({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000 }))
  })
  after(() => suite.t.close())
  suite.send = (method, url, payload, headers = suite.key) =>
    suite.t.app.inject({ method, url, headers: payload === undefined ? headers : { ...headers, ...JSON_TYPE }, payload: payload as string })
  suite.newPet = async (status) =>
    (await suite.send('POST', '/v1/pets', { name: 'Rex', categoryId: 7, ...(status ? { status } : {}) })).json().id
  suite.place = (petId, headers = suite.key) => suite.send('POST', '/v1/store/orders', { petId }, headers)
  return suite
}
