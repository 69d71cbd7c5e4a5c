import { type EventDraft, eventDraft } from '../events/event.js'
import type { EventType } from '../events/event-types.js'
import type { KeyView } from './administration.js'
import { keyEventOwner } from './api-key.js'
import { keyDocument } from './key-document.js'

/**
 * An event about a key (`key.created`, `key.rotated`, `key.revoked`, `key.leak_reported`): the key
 * as the admin API shows it (never its secret), as it is after the change, its customer's or its
 * chain's. Written with the change's own record, in its transaction (the service hands it to the
 * repository method that makes the change).
 */
export const keyEvent = (type: EventType, view: KeyView, at: number): EventDraft =>
  eventDraft(type, keyEventOwner(view), at, keyDocument(view))
