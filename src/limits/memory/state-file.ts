import { readFileSync } from 'node:fs'
import { mkdir, open, rename, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { PRIVATE_DIRECTORY_MODE, PRIVATE_FILE_MODE } from '../../shared/file-location.js'
import { type IdentityState, isStale } from '../policy.js'

/**
 * The in-memory limiter's windows and bans on disk, so that a restart neither hands every key its
 * day back nor lifts bans. One JSON document:
 *
 *   {"format":"animal-store-limiter-state","version":1,"savedAt":<ms>,"states":[
 *   ["k:key_abc",minuteStart,minuteCount,minuteRejected,dayStart,dayCount,banUntil,banLevel,banLevelExpiresAt],
 *   ...
 *   ]}
 *
 * One compact array per identity (a key id, an admin token id, a keyless client address, or an
 * overflow counter `o:<n>` shared by addresses: limits/address-identities.ts), fields in
 * STATE_FIELDS order. It holds key ids and client addresses, never a key; at most
 * LIMITER_MAX_ADDRESSES addresses, so its size has a bound (docs/limits.md). Written to a temporary file, fsynced
 * and renamed over the old one, so a crash at any point leaves the previous or the new state.
 */
export const STATE_FILE_FORMAT = 'animal-store-limiter-state'
/** Bumped whenever the meaning of a field changes; a file of another version is ignored. */
export const STATE_FILE_VERSION = 1

const STATE_FIELDS = [
  'minuteStart',
  'minuteCount',
  'minuteRejected',
  'dayStart',
  'dayCount',
  'banUntil',
  'banLevel',
  'banLevelExpiresAt',
] as const satisfies readonly (keyof IdentityState)[]

/** Identities serialised between two writes (two yields to the event loop). */
const ENTRIES_PER_CHUNK = 2000

export interface StateFileLog {
  warn(details: object, message: string): void
  info(details: object, message: string): void
}

export interface WriteResult {
  ok: boolean
  /** Identities written (the non-stale ones). */
  identities: number
  /** Time spent serialising on the event loop (ms), excluding the asynchronous file I/O. */
  blockingMs: number
}

function toState(entry: unknown): [string, IdentityState] | undefined {
  if (!Array.isArray(entry) || entry.length !== STATE_FIELDS.length + 1) return undefined
  const [identity, ...values] = entry as unknown[]
  if (typeof identity !== 'string' || identity === '') return undefined
  const state = {} as IdentityState
  for (const [i, field] of STATE_FIELDS.entries()) {
    const value = values[i]
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) return undefined
    state[field] = value
  }
  return [identity, state]
}

function serialise(identity: string, s: IdentityState): string {
  return `[${JSON.stringify(identity)},${s.minuteStart},${s.minuteCount},${s.minuteRejected},${s.dayStart},${s.dayCount},${s.banUntil},${s.banLevel},${s.banLevelExpiresAt}]`
}

export class LimiterStateFile {
  /** Set after a failed write until one succeeds, so a full disk logs once, not every interval. */
  private failing = false

  constructor(
    readonly path: string,
    private readonly log: StateFileLog,
  ) {}

  /**
   * The identities of the file that still matter at `now`. Never throws: no file is a first start;
   * an unreadable, corrupt or other-version file logs one warning and gives an empty state.
   */
  load(now: number): Map<string, IdentityState> {
    const states = new Map<string, IdentityState>()
    let text: string
    try {
      text = readFileSync(this.path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.startEmpty('unreadable', error)
      return states
    }
    let document: { format?: unknown; version?: unknown; states?: unknown }
    try {
      document = JSON.parse(text) ?? {}
    } catch (error) {
      this.startEmpty('not valid JSON', error)
      return states
    }
    if (document.format !== STATE_FILE_FORMAT) {
      this.startEmpty('not a limiter state file')
      return states
    }
    if (document.version !== STATE_FILE_VERSION) {
      this.startEmpty(`written in format version ${JSON.stringify(document.version)}, this version reads ${STATE_FILE_VERSION}`)
      return states
    }
    if (!Array.isArray(document.states)) {
      this.startEmpty('no list of states')
      return states
    }
    let stale = 0
    for (const [i, entry] of document.states.entries()) {
      const parsed = toState(entry)
      if (parsed === undefined) {
        this.startEmpty(`entry ${i} is malformed`)
        return new Map()
      }
      if (isStale(parsed[1], now)) stale++
      else states.set(parsed[0], parsed[1])
    }
    this.log.info({ file: this.path, identities: states.size, stale }, 'rate limiter: windows and bans restored from the state file')
    return states
  }

  /**
   * Replaces the file with the non-stale identities of `states` at `now`. Never throws (a failure
   * is logged once per run of failures and reported as ok: false). Serialises in chunks with the
   * writes in between, so a large state does not hold up requests for the whole serialisation;
   * each identity is written as it is at the moment its chunk is serialised.
   */
  async write(states: ReadonlyMap<string, IdentityState>, now: number): Promise<WriteResult> {
    const temporary = `${this.path}.${process.pid}.tmp`
    let identities = 0
    let blockingMs = 0
    try {
      await mkdir(dirname(this.path), { recursive: true, mode: PRIVATE_DIRECTORY_MODE })
      const handle = await open(temporary, 'w', PRIVATE_FILE_MODE)
      try {
        let chunk = `{"format":"${STATE_FILE_FORMAT}","version":${STATE_FILE_VERSION},"savedAt":${now},"states":[`
        let inChunk = 0
        let started = performance.now()
        for (const [identity, state] of states) {
          if (isStale(state, now)) continue
          chunk += (identities === 0 ? '\n' : ',\n') + serialise(identity, state)
          identities++
          if (++inChunk === ENTRIES_PER_CHUNK) {
            blockingMs += performance.now() - started
            await handle.write(chunk)
            chunk = ''
            inChunk = 0
            started = performance.now()
          }
        }
        blockingMs += performance.now() - started
        await handle.write(chunk + '\n]}\n')
        await handle.sync()
      } finally {
        await handle.close()
      }
      await rename(temporary, this.path)
      await this.syncDirectory()
    } catch (error) {
      await unlink(temporary).catch(() => {})
      if (!this.failing) {
        this.failing = true
        this.log.warn(
          { file: this.path, err: error instanceof Error ? error.message : String(error) },
          'rate limiter: cannot write the state file; limits keep working, but a restart now would forget recent counts and bans',
        )
      }
      return { ok: false, identities: 0, blockingMs }
    }
    if (this.failing) {
      this.failing = false
      this.log.info({ file: this.path }, 'rate limiter: state file written again')
    }
    return { ok: true, identities, blockingMs }
  }

  /** Makes the rename itself durable (a power loss could otherwise bring the old file back). */
  private async syncDirectory(): Promise<void> {
    try {
      const directory = await open(dirname(this.path), 'r')
      try {
        await directory.sync()
      } finally {
        await directory.close()
      }
    } catch {
      // Not every platform can fsync a directory; the rename is still atomic.
    }
  }

  private startEmpty(why: string, cause?: unknown): void {
    this.log.warn(
      { file: this.path, ...(cause === undefined ? {} : { err: cause instanceof Error ? cause.message : String(cause) }) },
      `rate limiter: ignoring the state file (${why}); starting with empty windows and no bans`,
    )
  }
}
