import { randomId } from '../shared/base62.js'

/** A customer's id: `cus_` and 16 base62 characters, made like a key id (which is `key_…`: the two never collide). */
export const CUSTOMER_ID_PATTERN = '^cus_[0-9A-Za-z]{16}$'

export const generateCustomerId = (): string => randomId('cus_')
