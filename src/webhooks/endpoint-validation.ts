import { CONTROL_CHARACTERS_REFUSED, hasControlCharacter, hiddenCharacterRefusal } from '../shared/control-characters.js'
import { invalid } from '../shared/refusal.js'
import { ENDPOINT_STATES, type ListWebhookEndpointsQuery, type WebhookEndpointRecord } from './endpoint.js'
import { ALL_EVENTS, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './event-types.js'
import { MAX_PREVIOUS_SECRET_SECONDS } from './secret.js'

/**
 * The rules of an endpoint's input that need no network, for the admin API and the CLI alike; each
 * refusal names its field. Whether its URL may be called is destination.ts's.
 */

export const MAX_URL_LENGTH = 2048
export const MAX_DESCRIPTION_LENGTH = 200

export function checkUrlText(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_URL_LENGTH)
    throw invalid('url', (name) => `${name('url')} must be 1 to ${MAX_URL_LENGTH} characters`)
  // The URL parser would drop a tab or a newline silently: refused, as in any other field.
  if (hasControlCharacter(raw)) throw invalid('url', (name) => `${name('url')} ${CONTROL_CHARACTERS_REFUSED}`)
  return raw
}

/** `['*']`, or known types without repeats, in the closed list's order (what an update compares). */
export function checkEvents(raw: unknown): WebhookEndpointRecord['events'] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.some((t) => typeof t !== 'string'))
    throw invalid('events', (name) => `${name('events')} must list event types, or be ["${ALL_EVENTS}"] for every type`)
  const types = raw as string[]
  if (types.includes(ALL_EVENTS)) {
    if (types.length > 1) throw invalid('events', (name) => `${name('events')}: "${ALL_EVENTS}" stands alone (every type, now and later)`)
    return [ALL_EVENTS]
  }
  const unknown = types.find((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t))
  if (unknown !== undefined)
    throw invalid(
      'events',
      (name) => `${name('events')}: unknown event type ${JSON.stringify(unknown)}; the types are ${WEBHOOK_EVENT_TYPES.join(', ')}, or "*"`,
    )
  if (new Set(types).size !== types.length) throw invalid('events', (name) => `${name('events')} must not name a type twice`)
  return WEBHOOK_EVENT_TYPES.filter((t) => types.includes(t)) as WebhookEventType[]
}

/** A description (trimmed), or null: none, or cleared. */
export function checkDescription(raw: unknown): string | null {
  if (raw === null || raw === undefined) return null
  const text = typeof raw === 'string' ? raw.trim() : ''
  if (text === '' || text.length > MAX_DESCRIPTION_LENGTH)
    throw invalid('description', (f) => `${f('description')} must be 1 to ${MAX_DESCRIPTION_LENGTH} characters (null: none)`)
  if (hasControlCharacter(raw as string)) throw invalid('description', (f) => `${f('description')} ${CONTROL_CHARACTERS_REFUSED}`)
  const hidden = hiddenCharacterRefusal(raw as string)
  if (hidden !== undefined) throw invalid('description', (f) => `${f('description')} ${hidden}`)
  return text
}

export function checkEnabled(raw: unknown): boolean {
  if (typeof raw !== 'boolean') throw invalid('enabled', (name) => `${name('enabled')} must be true or false`)
  return raw
}

export function checkPreviousSecretSeconds(raw: unknown): number {
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0 || raw > MAX_PREVIOUS_SECRET_SECONDS)
    throw invalid(
      'expiresInSeconds',
      (name) => `${name('expiresInSeconds')} must be an integer from 0 to ${MAX_PREVIOUS_SECRET_SECONDS} (7 days)`,
    )
  return raw
}

export function checkListQuery(query: ListWebhookEndpointsQuery): void {
  if (!Number.isSafeInteger(query.limit) || query.limit < 1 || query.limit > 100)
    throw invalid('limit', (name) => `${name('limit')} must be an integer from 1 to 100`)
  if (query.state !== undefined && !(ENDPOINT_STATES as readonly string[]).includes(query.state))
    throw invalid('state', (name) => `${name('state')} must be one of ${ENDPOINT_STATES.join(', ')}`)
}
