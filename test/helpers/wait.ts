/** Waiting in tests: by polling what is awaited, with bounds generous enough for a busy machine. */

/**
 * How long a test waits for a running server to refuse a key revoked elsewhere. README promises
 * 2 s (the key change log is polled every KEY_REFRESH_MS, default 1 s); the delay is printed, not
 * asserted: 5x the promise catches a server that never sees the revocation (a cached key would stay
 * valid until a restart) without failing on a busy machine.
 */
export const REVOCATION_DEADLINE_MS = 10_000

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `check` every `everyMs` until it returns true or `timeoutMs` passes; returns whether it did. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 50): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  while (performance.now() < deadline) {
    if (await check()) return true
    await sleep(everyMs)
  }
  return false
}
