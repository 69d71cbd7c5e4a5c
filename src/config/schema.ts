/**
 * The vocabulary of the variable table (variables.ts). A builder gives the whole declaration of a
 * variable: its JSON Schema, how its text reads as the value that schema checks, its default, what
 * the messages and the reference say it accepts, and where its value lands in Config. Nothing here
 * checks a value: validators.generated.ts does, generated from these schemas by Ajv's standalone
 * code (npm run config:generate), so that the CLI checks its configuration without loading Ajv or
 * TypeBox (TypeBox alone cost every command's start about half a second of CPU).
 */

/** The JSON Schema keywords the variables use; the generator hands them to Ajv as they are. */
export interface JsonSchema {
  type?: 'integer' | 'boolean' | 'string'
  minimum?: number
  maximum?: number
  const?: string
  enum?: readonly string[]
  anyOf?: readonly JsonSchema[]
  default?: unknown
  description?: string
}

/** What the reference (docs/configuration.md) and the start-up banner know of a variable beyond its type. */
export interface VariableNotes {
  description: string
  /** What a value looks like, where the type alone does not say (a URL, a list). */
  accepts?: string
  /** The default, where it depends on other variables (see rules.ts; the schema then has no `default`). */
  defaultText?: string
  /** The CLI reads it too, so a server and the CLI run beside it must agree on it. */
  cli?: boolean
}

/** Where a variable's value lands in Config: the field, and how the value becomes it (unchanged when no `toConfig`). */
export interface Landing<Value, Field extends string, Out> {
  field: Field
  toConfig?: (value: Value) => Out
}

/** A variable's declaration; `Value` is the type of its value, `Out` of its field `Field` in Config. */
export interface Variable<Value = unknown, Field extends string = string, Out = unknown> extends VariableNotes {
  /** What the generated validator checks the value against (with the default and description as annotations). */
  schema: JsonSchema
  /** The value of the variable when unset or empty. */
  default: Value
  field: Field
  /** The variable's text as the value its schema checks (digits as a number, boolean words as a boolean). */
  read(raw: string): unknown
  /** What the value must be, as the messages say it ("an integer from 0 to 65535"). */
  mustBe: string
  /** A check beyond the schema's keywords: what is wrong with a value (after the variable's name), or undefined. */
  problem?(value: string): string | undefined
  toConfig(value: Value): Out
}

type Notes<Value, Field extends string, Out> = VariableNotes & Landing<Value, Field, Out>

function declare<Value, Field extends string, Out>(
  schema: JsonSchema,
  read: (raw: string) => unknown,
  mustBe: string,
  notes: Notes<Value, Field, Out>,
): Variable<Value, Field, Out> {
  const { toConfig = (value: Value) => value as unknown as Out, ...rest } = notes
  return {
    ...rest,
    schema: { ...schema, description: notes.description },
    default: schema.default as Value,
    read,
    mustBe,
    toConfig,
  }
}

const digits = (raw: string): unknown => (/^\d+$/.test(raw) ? Number(raw) : raw)

export const integer = <const Field extends string, Out = number>(
  minimum: number,
  maximum: number,
  fallback: number,
  notes: Notes<number, Field, Out>,
) => declare({ type: 'integer', minimum, maximum, default: fallback }, digits, `an integer from ${minimum} to ${maximum}`, notes)

/** An integer, or the word `off`. */
export const integerOrOff = <const Field extends string, Out = number | 'off'>(
  minimum: number,
  maximum: number,
  fallback: number,
  notes: Notes<number | 'off', Field, Out>,
) =>
  declare(
    {
      anyOf: [
        { type: 'integer', minimum, maximum },
        { type: 'string', const: 'off' },
      ],
      default: fallback,
    },
    (raw) => (raw === 'off' ? raw : digits(raw)),
    `an integer from ${minimum} to ${maximum} or off`,
    notes,
  )

/** Words read as a boolean, any case. */
const TRUE_WORDS = ['1', 'true', 'yes', 'on']
const FALSE_WORDS = ['0', 'false', 'no', 'off']

export const flag = <const Field extends string, Out = boolean>(fallback: boolean, notes: Notes<boolean, Field, Out>) =>
  declare(
    { type: 'boolean', default: fallback },
    (raw) => {
      if (TRUE_WORDS.includes(raw.toLowerCase())) return true
      if (FALSE_WORDS.includes(raw.toLowerCase())) return false
      return raw
    },
    'true or false',
    notes,
  )

export const oneOf = <const T extends string, const Field extends string, Out = T>(
  values: readonly T[],
  fallback: T,
  notes: Notes<T, Field, Out>,
) => declare({ type: 'string', enum: values, default: fallback }, (raw) => raw, `one of ${values.join(', ')}`, notes)

/**
 * A string, with a shape of its own when `problem` is given: it says what is wrong with a value
 * (the message after the variable's name), or undefined when the value is right.
 */
export function text<const Field extends string, Out = string>(
  notes: Notes<string, Field, Out> & { default?: string },
  problem?: (value: string) => string | undefined,
): Variable<string, Field, Out> {
  const { default: fallback, ...rest } = notes
  const schema: JsonSchema = fallback === undefined ? { type: 'string' } : { type: 'string', default: fallback }
  const variable = declare(schema, (raw) => raw, notes.accepts ?? 'text', rest)
  return problem === undefined ? variable : { ...variable, problem }
}

/** A variable with no default: undefined when unset, and so is its field. */
export function optional<Value, const Field extends string, Out>(
  variable: Variable<Value, Field, Out>,
): Variable<Value | undefined, Field, Out | undefined> {
  return { ...variable, toConfig: (value) => (value === undefined ? undefined : variable.toConfig(value)) }
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
