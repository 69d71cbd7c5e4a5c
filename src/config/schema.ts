/**
 * The vocabulary of the configuration schema (CONFIG_SCHEMA in config.ts): each variable is a JSON
 * Schema in the form TypeBox gives it (`type`, `minimum`, `maximum`, `const`, `anyOf`, `default`,
 * `description`, and TypeBox's `~refine` for a shape of its own), built and checked here without
 * loading TypeBox. TypeBox costs a process about half a second of CPU (some 370 modules), which the
 * CLI, started for every command, would pay for these few keywords; test/config.test.ts checks that
 * TypeBox's Value.Check gives the same answer as `problemOf` for every variable.
 */

/** What the reference (docs/configuration.md) and the start-up banner know of a variable beyond its type. */
export interface VariableNotes {
  description: string
  /** What a value looks like, where the type alone does not say (a URL, a list). */
  accepts?: string
  /** The default, where it depends on other variables (the schema then has no `default`). */
  defaultText?: string
  /** The CLI reads it too, so a server and the CLI run beside it must agree on it. */
  cli?: boolean
}

/** TypeBox's refinement: a check beyond the keywords, and what to say when it fails. */
interface Refinement {
  check(value: string): boolean
  error(value: string): string
}

export interface Schema {
  type?: 'integer' | 'boolean' | 'string'
  minimum?: number
  maximum?: number
  const?: string
  anyOf?: Schema[]
  '~refine'?: Refinement[]
}

/** A variable's schema; `T` is the type of its value. */
export interface Variable<T> extends Schema, VariableNotes {
  default?: T
  /** The value's type, for the compiler only. */
  readonly '~value'?: T
}

/** The values a set of variables' schemas describe. */
export type Values<Variables> = { [Name in keyof Variables]: Variables[Name] extends Variable<infer T> ? T : never }

export const integer = (minimum: number, maximum: number, fallback: number, notes: VariableNotes): Variable<number> => ({
  type: 'integer',
  minimum,
  maximum,
  default: fallback,
  ...notes,
})

/** An integer, or the word `off`. */
export const integerOrOff = (minimum: number, maximum: number, fallback: number, notes: VariableNotes): Variable<number | 'off'> => ({
  anyOf: [
    { type: 'integer', minimum, maximum },
    { type: 'string', const: 'off' },
  ],
  default: fallback,
  ...notes,
})

export const flag = (fallback: boolean, notes: VariableNotes): Variable<boolean> => ({ type: 'boolean', default: fallback, ...notes })

export const oneOf = <const T extends string>(values: readonly T[], fallback: T, notes: VariableNotes): Variable<T> => ({
  anyOf: values.map((value) => ({ type: 'string', const: value })),
  default: fallback,
  ...notes,
})

/**
 * A string, with a shape of its own when `problem` is given: it says what is wrong with a value
 * (the message after the variable's name), or undefined when the value is right.
 */
export function text(notes: VariableNotes & { default?: string }, problem?: (value: string) => string | undefined): Variable<string> {
  if (problem === undefined) return { type: 'string', ...notes }
  return {
    type: 'string',
    ...notes,
    '~refine': [{ check: (value) => problem(value) === undefined, error: (value) => problem(value) ?? '' }],
  }
}

/** A variable with no default: undefined when unset. */
export const optional = <T>(variable: Variable<T>): Variable<T | undefined> => variable

/** What a schema accepts, as the error messages say it ("an integer from 0 to 65535"). */
export function accepted(schema: Schema & { accepts?: string }): string {
  if (schema.type === 'integer') return `an integer from ${schema.minimum} to ${schema.maximum}`
  if (schema.type === 'boolean') return 'true or false'
  if (schema.const !== undefined) return schema.const
  if (schema.anyOf?.every((member) => member.const !== undefined)) return `one of ${schema.anyOf.map(accepted).join(', ')}`
  if (schema.anyOf !== undefined) return schema.anyOf.map(accepted).join(' or ')
  return schema.accepts ?? 'text'
}

/** Words read as a boolean, any case. */
const TRUE_WORDS = ['1', 'true', 'yes', 'on']
const FALSE_WORDS = ['0', 'false', 'no', 'off']

/** A variable's text as the value its schema checks: digits as a number, boolean words as a boolean. */
export function fromText(schema: Schema, raw: string): unknown {
  if (schema.type === 'integer') return /^\d+$/.test(raw) ? Number(raw) : raw
  if (schema.type === 'boolean') {
    if (TRUE_WORDS.includes(raw.toLowerCase())) return true
    if (FALSE_WORDS.includes(raw.toLowerCase())) return false
    return raw
  }
  if (schema.anyOf !== undefined && !schema.anyOf.some((member) => member.const === raw)) {
    const number = schema.anyOf.find((member) => member.type === 'integer')
    if (number !== undefined) return fromText(number, raw)
  }
  return raw
}

/** Whether `value` meets the schema's keywords (refinements aside). */
function meets(schema: Schema, value: unknown): boolean {
  if (schema.anyOf !== undefined) return schema.anyOf.some((member) => meets(member, value))
  if (schema.type === 'integer') {
    if (typeof value !== 'number' || !Number.isInteger(value)) return false
    if (value < (schema.minimum ?? Number.NEGATIVE_INFINITY) || value > (schema.maximum ?? Number.POSITIVE_INFINITY)) return false
  }
  if (schema.type === 'boolean' && typeof value !== 'boolean') return false
  if (schema.type === 'string' && typeof value !== 'string') return false
  return schema.const === undefined || value === schema.const
}

/** What is wrong with the text `raw` of variable `name`, in one line naming it, or undefined when nothing is. */
export function problemOf(name: string, schema: Schema & { accepts?: string }, raw: string): string | undefined {
  const value = fromText(schema, raw)
  if (!meets(schema, value)) return `${name} must be ${accepted(schema)} (got ${JSON.stringify(raw)})`
  const failed = schema['~refine']?.find((refinement) => !refinement.check(value as string))
  return failed === undefined ? undefined : `${name} ${failed.error(value as string)}`
}

/** What is wrong with `raw` as an absolute URL of one of `protocols`, or undefined. */
export function urlProblem(raw: string, protocols: string[]): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    return `must be an absolute URL (got ${JSON.stringify(raw)})`
  }
  if (!protocols.includes(parsed.protocol)) return `must use ${protocols.join(' or ')} (got ${JSON.stringify(raw)})`
  return undefined
}

export const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, '')
