import { type EventOwner, eventDraft } from '../events/event.js'
import type { PetRecording } from './repository.js'

/**
 * What a client's create records: the `pet.created` event (the pet as the API shows it), the
 * creating key's, written in the create's transaction. A replay creates nothing and records nothing.
 */
export const petCreated =
  (owner: EventOwner, at: number): PetRecording =>
  (pet) => ({ audit: [], events: [eventDraft('pet.created', owner, at, pet)] })
