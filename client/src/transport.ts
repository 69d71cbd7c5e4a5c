import { type AnimalStoreError, ApiError, type ErrorCode, isErrorCode, NetworkError, UnexpectedResponseError } from './errors.js'
import { parseJson } from './json.js'
import { fullJitter, MAX_TIMER_MS, type RetryPolicy, serverRetryAt } from './retry.js'

/** Time, injectable so that tests run retries in virtual time. */
export interface Clock {
  now(): number
  /** Resolves after `ms`, rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const onAbort = () => {
        clearTimeout(timer)
        reject(signal!.reason)
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }, ms)
      signal?.addEventListener('abort', onAbort, { once: true })
    }),
}

/** Per call: the caller's cancellation and deadline. */
export interface CallOptions {
  signal?: AbortSignal
  /** Overall deadline of this call in ms (waits and retries included); default: the client's retry.deadlineMs. */
  deadlineMs?: number
}

/** Per call of a conditional read (`inventoryIfChanged`, `orders.getIfChanged`, …). */
export interface ConditionalOptions extends CallOptions {
  /** The ETag of the answer the caller holds, sent as If-None-Match; none: a plain read that returns the ETag. */
  etag?: string | undefined
}

/**
 * A conditional read's result: the answer and its ETag, or `notModified` when the ETag sent is
 * still current (a 304 without a body, which the service does not count against the key's quota).
 */
export type Conditional<T> = { notModified: false; value: T; etag: string | undefined } | { notModified: true; etag: string }

/** What happened on one HTTP attempt (for logs and metrics): the answer or the failure, and the wait before a retry. */
export interface AttemptEvent {
  method: string
  url: string
  /** 1 for the first attempt of a call. */
  attempt: number
  status?: number
  headers?: Headers
  error?: AnimalStoreError
  /** The wait before the next attempt; absent when this attempt ends the call. */
  retryInMs?: number
}

export interface TransportOptions {
  fetch: typeof fetch
  clock: Clock
  random: () => number
  policy: RetryPolicy
  onAttempt?: ((event: AttemptEvent) => void) | undefined
}

/** A key_banned answer without a usable Retry-After: assume the server's shortest ban. */
const DEFAULT_BAN_MS = 60_000

/**
 * A wait is only worth it when the attempt after it still has this long before the deadline: an
 * attempt with a few ms left times out before the server can answer, and may still reach it.
 */
const MIN_ATTEMPT_MS = 250

/** Codes whose answer says the request was not processed, or may be retried with the same Idempotency-Key. */
const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['rate_limited', 'service_unavailable', 'idempotency_conflict'])

/**
 * Sends one logical request, with retries: 429 rate_limited waits for Retry-After (else
 * X-RateLimit-Reset) plus jitter; 503 and network failures back off exponentially with full
 * jitter (never sooner than a 503's Retry-After). A request that is not GET/HEAD is retried only
 * when it carries an Idempotency-Key. No wait runs past the call's deadline: when the next one
 * would leave less than MIN_ATTEMPT_MS for the attempt after it, the last error is thrown at once. 429 key_banned is thrown at once, and until the ban
 * ends every call of this client fails without a request; after a 429 rate_limited, calls wait
 * for the window's reset before sending.
 */
export class Transport {
  private bannedUntil = 0
  private banError: ApiError | undefined
  private limitedUntil = 0
  private limitError: ApiError | undefined

  constructor(private readonly options: TransportOptions) {}

  /** Resolves with the 2xx answer (its body already read), or a 304 to If-None-Match; throws an AnimalStoreError otherwise. */
  async send(request: Request, call: CallOptions = {}): Promise<{ response: Response; text: string; attempts: number }> {
    const { clock, policy } = this.options
    const deadlineMs = call.deadlineMs ?? policy.deadlineMs
    if (!(Number.isFinite(deadlineMs) && deadlineMs > 0 && deadlineMs <= MAX_TIMER_MS)) {
      throw new RangeError(`deadlineMs must be a number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${deadlineMs}`)
    }
    const deadlineAt = clock.now() + deadlineMs
    const replayable = request.method === 'GET' || request.method === 'HEAD' || request.headers.has('idempotency-key')
    const sentRequestId = request.headers.get('x-request-id') ?? undefined

    for (let attempt = 1; ; attempt++) {
      call.signal?.throwIfAborted()
      await this.waitForGates(attempt - 1, deadlineAt, call.signal)

      const remaining = deadlineAt - clock.now()
      const timeoutMs = Math.max(1, Math.min(policy.attemptTimeoutMs, remaining))
      const timeout = AbortSignal.timeout(timeoutMs)
      const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout
      let failure: AnimalStoreError
      let response: Response | undefined
      try {
        response = await this.options.fetch(request.clone(), { signal })
        const text = await response.text()
        // A 304 answers a conditional read (If-None-Match): the caller's copy is current.
        if (response.ok || (response.status === 304 && request.headers.has('if-none-match'))) {
          this.options.onAttempt?.({
            method: request.method,
            url: request.url,
            attempt,
            status: response.status,
            headers: response.headers,
          })
          return { response, text, attempts: attempt }
        }
        failure = this.answerError(response, text, attempt, sentRequestId)
      } catch (error) {
        if (call.signal?.aborted) throw call.signal.reason
        const message = timeout.aborted ? `No answer within ${timeoutMs} ms` : `Network error: ${describe(error)}`
        failure = new NetworkError(message, timeout.aborted, { requestId: sentRequestId, attempts: attempt, cause: error })
      }

      const waitMs = this.retryDelay(failure, attempt - 1, replayable)
      const retry = waitMs !== undefined && attempt <= policy.maxRetries && clock.now() + waitMs + MIN_ATTEMPT_MS <= deadlineAt
      this.options.onAttempt?.({
        method: request.method,
        url: request.url,
        attempt,
        ...(response && { status: response.status, headers: response.headers }),
        error: failure,
        ...(retry && { retryInMs: waitMs }),
      })
      if (!retry) throw failure
      await clock.sleep(waitMs, call.signal)
    }
  }

  /** The wait before retrying after `failure`, or undefined when it must not be retried. */
  private retryDelay(failure: AnimalStoreError, retry: number, replayable: boolean): number | undefined {
    const { clock, policy, random } = this.options
    const now = clock.now()
    const jitter = fullJitter(policy, retry, random)
    if (failure instanceof NetworkError) return replayable ? jitter : undefined
    if (!(failure instanceof ApiError)) return undefined
    const hintMs = failure.retryAfterMs(now) ?? 0
    if (failure.code === 'key_banned') {
      this.bannedUntil = Math.max(this.bannedUntil, now + (failure.retryAt ? hintMs : DEFAULT_BAN_MS))
      this.banError = failure
      return undefined
    }
    if (!RETRYABLE_CODES.has(failure.code)) return undefined
    if (failure.code === 'rate_limited') {
      // Not processed: safe to resend whatever the method. The jitter spreads the clients that
      // all wake at the window's reset.
      this.limitedUntil = Math.max(this.limitedUntil, now + hintMs)
      this.limitError = failure
      return hintMs + jitter
    }
    return replayable ? Math.max(hintMs, jitter) : undefined
  }

  /** Honours what earlier answers to this client said: a ban fails at once, an exhausted window is waited out. */
  private async waitForGates(attemptsSoFar: number, deadlineAt: number, signal: AbortSignal | undefined): Promise<void> {
    const { clock, policy, random } = this.options
    const now = clock.now()
    if (this.bannedUntil > now && this.banError) throw relabel(this.banError, attemptsSoFar)
    if (this.limitedUntil > now && this.limitError) {
      const waitMs = this.limitedUntil - now + fullJitter(policy, 0, random)
      if (now + waitMs + MIN_ATTEMPT_MS > deadlineAt) throw relabel(this.limitError, attemptsSoFar)
      await clock.sleep(waitMs, signal)
    }
  }

  private answerError(response: Response, text: string, attempts: number, sentRequestId: string | undefined): AnimalStoreError {
    const requestId = response.headers.get('x-request-id') ?? sentRequestId
    let body: unknown
    try {
      body = parseJson(text)
    } catch {
      body = undefined
    }
    const { code, message, status } = (body ?? {}) as Record<string, unknown>
    if (!isErrorCode(code) || typeof message !== 'string' || status !== response.status) {
      const snippet = text.length > 200 ? `${text.slice(0, 200)}…` : text
      return new UnexpectedResponseError(`Unexpected ${response.status} answer: ${snippet}`, response.status, { requestId, attempts })
    }
    const retryAt = serverRetryAt(response.headers, this.options.clock.now(), status === 429)
    return new ApiError({ code, message, status }, { requestId, attempts, retryAt: retryAt === undefined ? undefined : new Date(retryAt) })
  }
}

/** The remembered error, thrown again for a call that sent nothing (or fewer attempts). */
function relabel(error: ApiError, attempts: number): ApiError {
  return new ApiError(
    { code: error.code, message: error.message, status: error.status },
    { requestId: error.requestId, attempts, retryAt: error.retryAt, cause: error },
  )
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
  return `${error.message}${cause}`
}
