import { parse, stringify } from 'lossless-json'

const INTEGER = /^-?\d+$/

/** Safe integers as number, larger integers as bigint (exact, as the server stores int64), the rest as number. */
function parseNumber(text: string): number | bigint {
  const n = Number(text)
  return INTEGER.test(text) && !Number.isSafeInteger(n) ? BigInt(text) : n
}

/** JSON.parse, except that integers beyond 2^53 come back as exact bigint instead of being rounded. */
export function parseJson(text: string): unknown {
  return parse(text, null, parseNumber)
}

/** JSON.stringify, except that bigint values are written as plain JSON integers. */
export function stringifyJson(value: unknown): string {
  const text = stringify(value)
  if (text === undefined) throw new TypeError('The request body cannot be serialized as JSON')
  return text
}
