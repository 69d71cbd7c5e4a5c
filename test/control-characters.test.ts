import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { escapeControlCharacters, hasControlCharacter, NO_CONTROL_CHARACTERS } from '../src/control-characters.js'

const isControl = (c: string) => {
  const n = c.codePointAt(0)!
  return n <= 0x1f || (n >= 0x7f && n <= 0x9f)
}

test('exactly U+0000–U+001F and U+007F–U+009F are control characters, for the check and the schema pattern alike', () => {
  const pattern = new RegExp(NO_CONTROL_CHARACTERS, 'u')
  for (let n = 0; n <= 0x2ff; n++) {
    const c = String.fromCodePoint(n)
    assert.equal(hasControlCharacter(`a${c}b`), isControl(c), `U+${n.toString(16)}`)
    assert.equal(pattern.test(`a${c}b`), !isControl(c), `U+${n.toString(16)}`)
  }
})

test('escaped text has no control character left, and reads back as the original as a JSON string', () => {
  assert.equal(escapeControlCharacters('a\u001b[2J\nb\u009b'), 'a\\u001b[2J\\u000ab\\u009b')
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (text) => {
      const escaped = escapeControlCharacters(text)
      assert.equal(hasControlCharacter(escaped), false)
      if (!/["\\]/.test(text)) assert.equal(JSON.parse(`"${escaped}"`), text)
    }),
  )
})
