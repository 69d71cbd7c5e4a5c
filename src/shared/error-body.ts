import { type Static, Type } from 'typebox'
import { type ApiError, ERROR_STATUS, type ErrorCode } from './errors.js'

/**
 * The `Error` schema every error answer has (registered by app.ts, referenced by every operation).
 * In a module of its own, not beside ApiError: the CLI imports ApiError, and TypeBox is about a
 * third of a second of start-up that a CLI command would pay for a schema it never uses.
 */
export const ErrorBody = Type.Object(
  {
    code: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: Object.keys(ERROR_STATUS),
      description: 'Machine-readable error code from a closed list.',
    }),
    message: Type.String({ description: 'Human-readable description.' }),
    status: Type.Integer({ description: 'The HTTP status code, repeated.' }),
  },
  { $id: 'Error', additionalProperties: false, title: 'Error' },
)
export type ErrorBody = Static<typeof ErrorBody>

/** The body of an error answer, typed by the schema (so the compiler checks ApiError against it). */
export const bodyOf = (error: ApiError): ErrorBody => error.toBody()
