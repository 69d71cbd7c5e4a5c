/**
 * An int64 value. A JS number loses precision above 2^53, so such values travel as bigint from
 * the JSON parser through storage to the serializer; invariant: a number is always a safe integer.
 * Shared by validation, the pets schemas and both stores, so it belongs to none of them.
 */
export type Int64 = number | bigint

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER)
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER)

/** The Int64 invariant: a number when it is a safe integer, the bigint otherwise. */
export const toInt64 = (v: bigint): Int64 => (v >= SAFE_MIN && v <= SAFE_MAX ? Number(v) : v)
