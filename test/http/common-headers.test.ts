import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { requestPath } from '../../src/http/common-headers.js'

test('requestPath: the path of origin-form and absolute-form request targets, without the query', () => {
  const cases: Array<[string, string]> = [
    ['/v1/pets', '/v1/pets'],
    ['/v1/pets?limit=5&after=3', '/v1/pets'],
    ['/?', '/'],
    ['/admin/v1/keys?x=http://a/b', '/admin/v1/keys'],
    ['http://example.com/admin/v1/keys?x=1', '/admin/v1/keys'],
    ['HTTPS://Example.com:8443/v1/pets', '/v1/pets'],
    ['http://example.com', ''],
    ['*', '*'],
  ]
  for (const [url, path] of cases) assert.equal(requestPath(url), path, url)
})

test('requestPath: the fast origin-form path agrees with the general rule', () => {
  const general = (url: string) => (url.split('?')[0] ?? '').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '')
  fc.assert(
    fc.property(fc.string(), fc.option(fc.string()), (path, query) => {
      const url = `/${path}${query === null ? '' : `?${query}`}`
      assert.equal(requestPath(url), general(url))
    }),
  )
})
