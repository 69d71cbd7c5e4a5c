import type { ApiKeyRecord } from './api-key.js'

/*
 * A revocation's keys of one rotation chain (keys/key-service.ts says which keys it takes): their
 * order in answers and audit entries, and what an entry says of them.
 */

/** The chain's keys a revocation took with it, in an audit entry's details (none: nothing said). */
export const alsoRevoked = (graces: ApiKeyRecord[], named: ApiKeyRecord) =>
  graces.length === 0 ? {} : { alsoRevoked: alongChain(graces, named).map((g) => g.id) }

/** Newest first along the rotation chain: fewest rotations between a key and the last key known of it. */
export function alongChain(graces: ApiKeyRecord[], named: ApiKeyRecord): ApiKeyRecord[] {
  const next = new Map([named, ...graces].map((k) => [k.id, k.rotatedTo]))
  const hops = (id: string) => {
    let n = 0
    for (let to = next.get(id); to != null && next.has(to) && n < next.size; to = next.get(to)) n++
    return n
  }
  return [...graces].sort((a, b) => hops(a.id) - hops(b.id))
}
