import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { readDateTime } from '../../src/shared/date-time.js'

/** Instants whose local time at any offset still has four digits of year. */
const YEARS = { min: new Date('0000-01-02T00:00:00Z'), max: new Date('9999-12-30T23:59:59.999Z') }

test('every date and time that exists, in each written form, reads as Date.parse reads it', () => {
  fc.assert(
    fc.property(
      fc.date({ ...YEARS, noInvalidDate: true }),
      fc.constantFrom('ms', 'seconds', 'minutes', 'lower', 'micros', 'tenth'),
      fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
      (at, form, offsetMinutes) => {
        // The same instant written with this offset: 2027-01-31T02:00:00+02:00.
        const local = new Date(at.getTime() + offsetMinutes * 60_000).toISOString()
        const sign = offsetMinutes < 0 ? '-' : '+'
        const abs = Math.abs(offsetMinutes)
        const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
        const base = local.slice(0, 19)
        const fraction = local.slice(19, 23)
        const text = {
          ms: `${base}${fraction}${offset}`,
          seconds: `${base}Z`,
          minutes: `${base.slice(0, 16)}Z`,
          lower: `${base}${fraction}z`.replace('T', 't'),
          micros: `${base}${fraction}999${offset}`,
          tenth: `${base}.5Z`,
        }[form]
        assert.deepEqual(readDateTime(text), { ms: Date.parse(text) }, text)
      },
    ),
  )
})

test('a date or time that does not exist is refused, saying which part, where Date.parse moves it', () => {
  const cases: Array<[string, string]> = [
    ['2027-02-30T00:00:00Z', 'February 2027 has 28 days, not day 30'],
    ['2027-02-29T00:00:00Z', 'February 2027 has 28 days, not day 29'],
    ['2100-02-29T12:00:00Z', 'February 2100 has 28 days, not day 29'],
    ['2027-04-31T00:00:00+02:00', 'April 2027 has 30 days, not day 31'],
    ['2027-06-31T00:00Z', 'June 2027 has 30 days, not day 31'],
    ['2027-01-00T00:00:00Z', 'January 2027 has 31 days, not day 00'],
    ['2027-13-01T00:00:00Z', 'months go from 01 to 12, not 13'],
    ['2027-00-01T00:00:00Z', 'months go from 01 to 12, not 00'],
    ['2027-01-01T24:00:00Z', 'hours go from 00 to 23, not 24'],
    ['2027-01-01T23:60:00Z', 'minutes go from 00 to 59, not 60'],
    ['2027-12-31T23:59:60Z', 'seconds go from 00 to 59, not 60'],
    ['2027-01-01T00:00:00+24:00', 'an offset goes from -23:59 to +23:59, not +24:00'],
    ['2027-01-01T00:00:00-05:60', 'an offset goes from -23:59 to +23:59, not -05:60'],
  ]
  for (const [text, detail] of cases) assert.deepEqual(readDateTime(text), { problem: 'impossible', detail }, text)
  // What the service used to store for the first and the eighth.
  assert.equal(new Date(Date.parse('2027-02-30T00:00:00Z')).toISOString(), '2027-03-02T00:00:00.000Z')
  assert.equal(new Date(Date.parse('2027-01-01T24:00:00Z')).toISOString(), '2027-01-02T00:00:00.000Z')
  // Leap years: every fourth, not every hundredth, every four hundredth.
  for (const text of ['2028-02-29T00:00:00Z', '2000-02-29T00:00:00Z', '0000-02-29T00:00:00Z'])
    assert.deepEqual(readDateTime(text), { ms: Date.parse(text) }, text)
})

test('text that is not a date and time with an offset is not one', () => {
  for (const text of [
    '',
    'tomorrow',
    '2027-01-01',
    '2027-01-01T00:00:00',
    '2027-01-01 00:00:00Z',
    '2027-1-1T00:00:00Z',
    '27-01-01T00:00:00Z',
    '+002027-01-01T00:00:00Z',
    '2027-01-01T00:00:00.Z',
    '2027-01-01T00:00:00+0100',
    '2027-01-01T00Z',
    '2027-01-01T00:00:00Z ',
    '1798761600000',
  ])
    assert.deepEqual(readDateTime(text), { problem: 'form' }, text)
})
