import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ApiError } from '../../src/shared/errors.js'

// An ApiError is an answer (a 401, a 429 of a flood): capturing a stack for each was the largest
// single cost of a refused request (docs/limits.md, "What one client can do to the others").
test('an ApiError carries no stack trace, and other errors still do', () => {
  const limit = Error.stackTraceLimit
  const refused = new ApiError('rate_limited', 'Rate limit exceeded; retry after 7 s', { 'retry-after': 7 })
  assert.equal(Error.stackTraceLimit, limit, 'the global limit is left as it was')
  assert.equal(refused.stack, 'ApiError: Rate limit exceeded; retry after 7 s', 'no frames')
  assert.deepEqual(
    [refused.code, refused.status, refused.message, refused.headers, refused instanceof Error],
    ['rate_limited', 429, 'Rate limit exceeded; retry after 7 s', { 'retry-after': 7 }, true],
  )
  assert.match(new Error('a failure').stack ?? '', /\n\s+at /, 'a plain error keeps its frames')
})
