/**
 * What the Redis failover tests (test/system/limits/redis-cluster.test.ts, redis-sentinel.test.ts) run
 * while they kill a master: a steady load of rate-limited keys spread over several instances,
 * counting what each key was allowed per minute window, and a watch on the instances'
 * animal_store_limiter_fallback_total that times the window of fallback decisions.
 */
import { bearer, sleep } from './process.js'

export interface LimitedKey {
  key: string
  perMinute: number
}

/** Loops, one per key, each sending GET /v1/pets round robin over `bases`, `pauseMs` apart. */
export class LimitedLoad {
  /** `status` or `status code` -> count. */
  readonly statuses = new Map<string, number>()
  /** `<key index>@<minute>` -> requests allowed (200) in that minute window. */
  readonly allowed = new Map<string, number>()
  /** Anything but 200 and 429: a 5xx, or a request that failed at the client. */
  readonly failures: string[] = []
  sent = 0
  private running = true
  private readonly loops: Promise<void>[]

  constructor(
    private readonly bases: string[],
    readonly keys: LimitedKey[],
    pauseMs = 20,
  ) {
    this.loops = keys.map((key, k) => this.loop(key, k, pauseMs))
  }

  private async loop({ key }: LimitedKey, k: number, pauseMs: number): Promise<void> {
    for (let i = k; this.running; i++) {
      const base = this.bases[i % this.bases.length]!
      this.sent++
      let label: string
      try {
        const res = await fetch(`${base}/v1/pets?limit=1`, { headers: bearer(key), signal: AbortSignal.timeout(10_000) })
        const text = await res.text()
        const code = res.status === 200 ? undefined : (JSON.parse(text) as { code?: string }).code
        label = code === undefined ? String(res.status) : `${res.status} ${code}`
        // Counted in the minute the answer came back in: the windows are aligned to the clock minute.
        if (res.status === 200) {
          const window = `${k}@${Math.floor(Date.now() / 60_000)}`
          this.allowed.set(window, (this.allowed.get(window) ?? 0) + 1)
        } else if (res.status !== 429) this.failures.push(`${label} from ${base}`)
      } catch (error) {
        label = 'transport error'
        this.failures.push(`${String(error)} from ${base}`)
      }
      this.statuses.set(label, (this.statuses.get(label) ?? 0) + 1)
      await sleep(pauseMs)
    }
  }

  async stop(): Promise<void> {
    this.running = false
    await Promise.all(this.loops)
  }

  /** Every key has used its whole quota in some minute window (so Redis holds it exhausted). */
  exhausted(): boolean {
    return this.keys.every((key, k) => [...this.allowed].some(([window, n]) => window.startsWith(`${k}@`) && n >= key.perMinute))
  }

  /** The most any key was allowed in one minute window, and which. */
  maxAllowed(): { key: number; allowed: number } {
    let worst = { key: -1, allowed: 0 }
    for (const [window, n] of this.allowed) if (n > worst.allowed) worst = { key: Number(window.split('@')[0]), allowed: n }
    return worst
  }
}

/** animal_store_limiter_fallback_total{policy} from one instance's /metrics, at its admin listener `base` (0 while absent). */
export async function fallbackCount(base: string, policy = 'open'): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5_000) })).text()
  const match = new RegExp(`^animal_store_limiter_fallback_total\\{policy="${policy}"\\} (\\d+)`, 'm').exec(text)
  return match ? Number(match[1]) : 0
}

/** Polls the fallback counters of `bases` every 100 ms: when they first and last grew. */
export class FallbackWatch {
  /** performance.now() of the poll that first / last saw the sum grow. */
  firstGrewAt: number | undefined
  lastGrewAt: number | undefined
  total = 0
  private running = true
  private readonly done: Promise<void>

  constructor(private readonly bases: string[]) {
    this.done = this.poll()
  }

  private async poll(): Promise<void> {
    let baseline: number | undefined
    let previous = 0
    while (this.running) {
      try {
        const sum = (await Promise.all(this.bases.map((b) => fallbackCount(b)))).reduce((a, b) => a + b, 0)
        if (baseline === undefined) baseline = sum
        else if (sum > previous) {
          this.firstGrewAt ??= performance.now()
          this.lastGrewAt = performance.now()
        }
        previous = sum
        this.total = sum - baseline
      } catch {
        // an instance busy or restarting: the next poll counts it
      }
      await sleep(100)
    }
  }

  async stop(): Promise<void> {
    this.running = false
    await this.done
  }

  /** "first after X ms, last after Y ms (window Z ms)" relative to `from` (performance.now()). */
  describe(from: number): string {
    if (this.firstGrewAt === undefined || this.lastGrewAt === undefined) return 'no fallback decision'
    return (
      `fallback decisions from ${(this.firstGrewAt - from).toFixed(0)} ms to ${(this.lastGrewAt - from).toFixed(0)} ms ` +
      `after the kill (window ${(this.lastGrewAt - this.firstGrewAt + 100).toFixed(0)} ms, ±100 ms)`
    )
  }
}
