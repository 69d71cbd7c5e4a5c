/**
 * The keys as the CLI shows them to a person (without --json). Stored text (names, metadata) is
 * printed with its control characters escaped: it cannot act on the terminal or forge a row.
 */

import type { KeyUsage, KeyView } from '../keys/administration.js'
import { escapeControlCharacters } from '../shared/control-characters.js'
import { table } from './table.js'

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())
const isoSeconds = (s: number | null): string | null => (s === null ? null : new Date(s * 1000).toISOString())

/** Within this of its expiry, an active key says when it stops (as the console's badge does). */
const EXPIRING_WITHIN_MS = 24 * 3_600_000

/**
 * The state in words. A rotated key in its grace period, and a key about to expire, are `active` to
 * the API (they still authenticate) but end by themselves: that is what an operator needs to see.
 */
export function stateText(v: KeyView, now = Date.now()): string {
  if (v.state === 'revoked') return `revoked ${iso(v.revokedAt)}`
  if (v.state === 'expired') return `expired ${iso(v.expiresAt)}`
  if (v.rotatedTo !== null) return v.expiresAt === null ? `rotated to ${v.rotatedTo}` : `rotated, works until ${iso(v.expiresAt)}`
  if (v.expiresAt !== null && v.expiresAt - now <= EXPIRING_WITHIN_MS) {
    const minutes = Math.max(1, Math.round((v.expiresAt - now) / 60_000))
    return `expires in ${minutes < 60 ? `${minutes} min` : `${Math.round(minutes / 60)} h`} (${iso(v.expiresAt)})`
  }
  return 'active'
}

/** `keys list`: a header row, then one row per key. */
export function keyTable(keys: KeyView[]): string {
  return table(
    ['ID', 'PREFIX', 'PLAN', 'PER MINUTE', 'PER DAY', 'STATE', 'NAME'],
    keys.map((v) => [v.id, `${v.prefix}…`, v.plan, String(v.perMinute), String(v.perDay), stateText(v), escapeControlCharacters(v.name)]),
    [3, 4],
  )
}

/** `keys show`: one field a line. */
export function keyDetails(v: KeyView): string {
  const rows: Array<[string, string | number | null]> = [
    ['Key', `${v.id} (${v.prefix}…)`],
    ['Name', escapeControlCharacters(v.name)],
    ['Plan', `${v.plan}: ${v.perMinute}/min, ${v.perDay}/day`],
    ['State', stateText(v)],
    ['Scopes', v.scopes.join(' ')],
    [
      'Quota',
      v.customerId !== null
        ? `customer ${v.customerId} (shared by its keys)`
        : v.quotaId === v.id
          ? v.quotaId
          : `${v.quotaId} (shared along its rotation chain)`,
    ],
    ['Created', iso(v.createdAt)],
    ['Updated', iso(v.updatedAt)],
    ['Expires', iso(v.expiresAt) ?? 'never'],
    ['Revoked', iso(v.revokedAt) ?? 'no'],
    ['Rotated from', v.rotatedFrom ?? '-'],
    ['Rotated to', v.rotatedTo ?? '-'],
    ['Last used', iso(v.lastUsedAt) ?? 'never (or not yet flushed)'],
    ['Metadata', v.metadata === null ? '-' : escapeControlCharacters(JSON.stringify(v.metadata))],
  ]
  return rows.map(([k, value]) => `${(k + ':').padEnd(14)}${value}\n`).join('')
}

/** `keys usage`: the windows, the ban and the last use, then where the numbers come from. */
export function usageText(u: KeyUsage, note: string): string {
  const window = (name: string, w: KeyUsage['minute']) =>
    `${name.padEnd(8)}${w.used}/${w.limit} used, ${w.remaining} remaining, resets ${isoSeconds(w.resetAt)}\n`
  const ban = u.ban.active ? `banned until ${isoSeconds(u.ban.until)} (level ${u.ban.level})` : `not banned (level ${u.ban.level})`
  return (
    `Key ${u.keyId} (quota ${u.quotaId})\n` +
    window('Minute', u.minute) +
    window('Day', u.day) +
    `Ban     ${ban}\n` +
    `Last    ${iso(u.lastUsedAt) ?? 'never'}\n` +
    note
  )
}

export { iso }
