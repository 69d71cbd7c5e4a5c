import { createHash } from 'node:crypto'
import type { ApiKeyRecord } from '../keys/api-key.js'
import type { Clock } from '../shared/clock.js'
import { ApiError } from '../shared/errors.js'
import { PeriodicJob } from '../shared/periodic-job.js'
import type { IdempotencyClaim, PetRepository } from './repository.js'
import type { NewPet, Pet } from './schemas.js'

/**
 * Idempotent creates (IETF draft-ietf-httpapi-idempotency-key-header): POST /v1/pets with an
 * Idempotency-Key creates the pet once per customer (`idempotencyScope`) and key; a retry with the same body replays
 * the first answer, with another body it is refused (422), and while the first is still being
 * processed it is refused (409).
 *
 * "In flight" is not a stored state: a stored in-flight row would outlive a crash and block every
 * retry until some lease ran out. Instead, the record is written only in the transaction that
 * creates the pet, and a request in flight is one this process is handling (the set below) or, on
 * PostgreSQL, one whose transaction holds the key's advisory lock in another instance.
 */

/**
 * Whose Idempotency-Key records a request uses: the owner of its orders and of its quota
 * (`orderOwner` and `limiterIdentity` in keys/api-key.ts), its key's customer, for every key of it,
 * or else its key's quota, shared along its rotation chain. So a retry sent through another key of
 * the customer, or with the successor of a rotated key, replays the first answer instead of
 * creating a second animal (or, for an order, being refused the animal its first attempt took).
 * Stored as the customer's id or the quota's (a key id), which cannot collide (`cus_…`, `key_…`):
 * the records of a key without a customer keep the form they had before customers, and migration
 * 018 moved those of a customer's keys.
 */
export const idempotencyScope = (apiKey: Pick<ApiKeyRecord, 'quotaId' | 'customerId'>): string => apiKey.customerId ?? apiKey.quotaId

/** Records are kept at least this long, then deleted by the sweep. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000
/** How often each instance deletes expired records (a record lives at most retention + this). */
export const IDEMPOTENCY_SWEEP_MS = 10 * 60 * 1000

const MAX_KEY_LENGTH = 255
const BARE_KEY = /^[\x21-\x7e]+$/
/** The draft's form, a Structured Field string: visible ASCII inside quotes, with \" and \\ escapes. */
const QUOTED_KEY = /^"((?:[\x21\x23-\x5b\x5d-\x7e]|\\["\\])+)"$/
const INVALID_KEY = 'Idempotency-Key must be 1 to 255 visible ASCII characters, bare or as a quoted string ("..."), sent once'

/**
 * The Idempotency-Key header's key, or undefined without the header. Accepted: the draft's quoted
 * string ("abc", with \" and \\ escapes) and the bare form most APIs use (abc); both name the same
 * key. A repeated header reaches us joined with ", " and is refused (the space is not allowed).
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (typeof header !== 'string') throw new ApiError('invalid_request', INVALID_KEY)
  let key: string | undefined
  if (header.startsWith('"')) key = QUOTED_KEY.exec(header)?.[1]?.replace(/\\(["\\])/g, '$1')
  else if (BARE_KEY.test(header)) key = header
  if (key === undefined || key.length > MAX_KEY_LENGTH) throw new ApiError('invalid_request', INVALID_KEY)
  return key
}

/** SHA-256 of the canonical body: the validated fields in a fixed order, so spacing and key order do not matter. */
export function fingerprintOf(pet: NewPet): string {
  const canonical = JSON.stringify([pet.name, String(pet.categoryId), pet.status ?? null])
  return createHash('sha256').update(canonical).digest('hex')
}

/**
 * The first answer again, byte for byte: the animal as it was created, which the request names
 * (the same fingerprint: the same fields) but for its id. It may have changed since (an order
 * moves its status); GET shows it as it is now.
 */
function asCreated(id: number, pet: NewPet): Pet {
  const created: Pet = { id, name: pet.name, categoryId: pet.categoryId }
  if (pet.status !== undefined) created.status = pet.status
  return created
}

export interface IdempotentResult {
  pet: Pet
  /** The pet was created by an earlier request with the same key and body. */
  replayed: boolean
}

export class IdempotentCreates {
  private readonly inFlight = new Set<string>()

  constructor(
    private readonly pets: PetRepository,
    private readonly clock: Clock,
  ) {}

  /** Creates `pet` once for (scope, key); throws the ApiError to answer with when it must not. */
  async create(scope: string, key: string, pet: NewPet): Promise<IdempotentResult> {
    const slot = `${scope}\n${key}`
    if (this.inFlight.has(slot)) throw inFlightError()
    this.inFlight.add(slot)
    try {
      const claim: IdempotencyClaim = { scope, key, fingerprint: fingerprintOf(pet), createdAt: this.clock.now() }
      const result = await this.pets.createPetOnce(pet, claim)
      switch (result.outcome) {
        case 'created':
          return { pet: result.pet, replayed: false }
        case 'replayed':
          return { pet: asCreated(result.pet.id, pet), replayed: true }
        case 'pet_missing':
          // A plain Error: answered 500 internal_error and logged, as any broken invariant.
          throw new Error(`the Idempotency-Key record names pet ${result.petId}, which is not in the store`)
        case 'in_flight':
          throw inFlightError()
        case 'reused':
          throw new ApiError(
            'idempotency_key_reused',
            'This Idempotency-Key was already used with a different request body; use a new key for a new animal',
          )
      }
    } finally {
      this.inFlight.delete(slot)
    }
  }
}

/**
 * Deletes the records past IDEMPOTENCY_RETENTION_MS: at start, then every IDEMPOTENCY_SWEEP_MS (all
 * instances may: a delete is idempotent). A background job of the app, started and stopped by
 * app.ts with the others.
 */
export class IdempotencySweep {
  private readonly job: PeriodicJob

  constructor(
    private readonly pets: Pick<PetRepository, 'deleteIdempotencyRecords'>,
    private readonly clock: Clock,
    onError: (error: unknown) => void,
  ) {
    this.job = new PeriodicJob(() => this.pets.deleteIdempotencyRecords(this.clock.now() - IDEMPOTENCY_RETENTION_MS), {
      intervalMs: IDEMPOTENCY_SWEEP_MS,
      onError,
      runAtStart: true,
    })
  }

  /** Deletes the records past the retention; resolves with how many (never rejects: an error goes to onError). */
  run(): Promise<number> {
    return this.job.run()
  }

  start(): void {
    this.job.start()
  }

  /** Stops the timer and waits for a sweep in flight (the store closes after it). */
  stop(): Promise<void> {
    return this.job.stop()
  }
}

/** 409 idempotency_conflict: the first request with this key is still being processed (also for orders). */
export const inFlightError = () =>
  new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still being processed; retry shortly', { 'retry-after': 1 })
