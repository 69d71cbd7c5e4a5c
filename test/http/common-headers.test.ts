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

// The request targets below are assembled from their parts, so the expected path is the part the
// target was made from, not a second implementation of the rule.
/** Any text (every code point), with the characters that mean something in a URL among it. */
const textWith = (...specials: string[]) =>
  fc.array(fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom(...specials))).map((parts) => parts.join(''))
/** What may stand in a path: anything but '?' (whether or not a client should send it). */
const pathText = textWith('/', '#', '%', ':', '//', 'http://').filter((s) => !s.includes('?'))
const query = fc.option(textWith('?', '/', '#', 'http://a/b'))
const target = (start: string, path: string, q: string | null) => `${start}${path}${q === null ? '' : `?${q}`}`

test('requestPath: an origin-form target (/path[?query]) is its path, whatever the path and the query hold', () => {
  fc.assert(
    fc.property(pathText, query, (rest, q) => {
      const path = `/${rest}`
      assert.equal(requestPath(target('', path, q)), path)
    }),
  )
})

test('requestPath: an absolute-form target (scheme://authority[/path][?query]) is its path, whatever its scheme’s case', () => {
  const scheme = fc
    .tuple(fc.constantFrom(...'aHz'), fc.string({ unit: fc.constantFrom(...'aZ09+.-') }))
    .map(([first, rest]) => first + rest)
  const authority = textWith('@', ':', '[', ']', '#').filter((s) => !/[/?]/.test(s))
  const path = fc.option(pathText.map((rest) => `/${rest}`))
  fc.assert(
    fc.property(scheme, authority, path, query, (s, host, p, q) => {
      assert.equal(requestPath(target(`${s}://${host}`, p ?? '', q)), p ?? '')
    }),
  )
})
