import type { AdminKey } from './api.js'
import { time } from './format.js'

/** Within this of its expiry, an active key says when it stops rather than "active". */
export const EXPIRING_WITHIN_MS = 24 * 3_600_000

export type StateBadge = { kind: 'active' | 'rotated' | 'expiring' | 'expired' | 'revoked'; text: string }

const inWords = (ms: number) => {
  const minutes = Math.max(1, Math.round(ms / 60_000))
  return minutes < 60 ? `${minutes} min` : `${Math.round(minutes / 60)} h`
}

/**
 * The state an operator needs to see. The API's `state` is `active` for a rotated key in its grace
 * period and for a key about to expire (both still authenticate): each ends by itself, so the
 * badge says when.
 */
export function stateBadge(k: Pick<AdminKey, 'state' | 'expiresAt' | 'rotatedTo'>, now = Date.now()): StateBadge {
  if (k.state !== 'active') return { kind: k.state, text: k.state }
  if (k.rotatedTo !== null)
    return { kind: 'rotated', text: k.expiresAt === null ? 'rotated' : `rotated (works until ${time(k.expiresAt)})` }
  if (k.expiresAt !== null) {
    const left = Date.parse(k.expiresAt) - now
    if (left <= EXPIRING_WITHIN_MS) return { kind: 'expiring', text: `expires in ${inWords(left)}` }
  }
  return { kind: 'active', text: 'active' }
}

/** The state as a badge (`data-state` is the kind, for tests and styles). */
export function StateBadge({ apiKey }: { apiKey: Pick<AdminKey, 'state' | 'expiresAt' | 'rotatedTo'> }) {
  const badge = stateBadge(apiKey)
  return (
    <span class={`state state-${badge.kind}`} data-state={badge.kind}>
      {badge.text}
    </span>
  )
}
