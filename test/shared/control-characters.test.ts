import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import {
  escapeControlCharacters,
  findNul,
  HIDDEN_CHARACTERS_TEXT,
  hasControlCharacter,
  hiddenCharacterRefusal,
  NO_CONTROL_CHARACTERS,
} from '../../src/shared/control-characters.js'

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

test('text-direction and invisible characters: refused naming the first as U+XXXX, escaped for a terminal; the joiners and variation selectors kept', () => {
  const hidden = [
    0xad, 0x61c, 0x180e, 0x200b, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202e, 0x2060, 0x2064, 0x2066, 0x2069, 0x206f, 0xfeff, 0xfff9,
    0xfffb, 0xe0000, 0xe0041, 0xe007f,
  ]
  for (const n of hidden) {
    const c = String.fromCodePoint(n)
    const name = `U+${n.toString(16).toUpperCase().padStart(4, '0')}`
    assert.equal(hiddenCharacterRefusal(`a${c}b${'\u202e'}`), `must not contain ${name} (no text-direction or invisible characters)`)
    assert.equal(JSON.parse(`"${escapeControlCharacters(`a${c}b`)}"`), `a${c}b`)
    assert.equal(hiddenCharacterRefusal(escapeControlCharacters(`a${c}b`)), undefined, name)
  }
  for (const n of [0x200c, 0x200d, 0xfe0f, 0x2065, 0x2070, 0xe0080, 0x41, 0xe9, 0x1f600]) {
    const c = String.fromCodePoint(n)
    assert.equal(hiddenCharacterRefusal(`a${c}b`), undefined, n.toString(16))
    assert.equal(escapeControlCharacters(`a${c}b`), `a${c}b`, n.toString(16))
  }
  assert.equal(escapeControlCharacters('\u202eevil \u{e0041}'), '\\u202eevil \\udb40\\udc41')
  assert.match(HIDDEN_CHARACTERS_TEXT, /^U\+00AD, U\+061C, .*U\+2028–U\+202E, .*U\+FEFF, U\+FFF9–U\+FFFB, U\+E0000–U\+E007F$/)
})

test('findNul names every string and every key holding a NUL, however deep; nothing in text without one', () => {
  assert.deepEqual(findNul({ name: 'Rex', tags: ['a', 'b\u0000'], meta: { 'k\u0000': { deep: '\u0000' } }, n: 1, b: 2n, z: null }), [
    { path: ['tags', 1], inKey: false },
    { path: ['meta', 'k\u0000'], inKey: true },
    { path: ['meta', 'k\u0000', 'deep'], inKey: false },
  ])
  assert.deepEqual(findNul('\u0000'), [{ path: [], inKey: false }])
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const holds = JSON.stringify(value).includes('\\u0000')
      assert.equal(findNul(value).length > 0, holds)
    }),
  )
})
