/** Injected time source (milliseconds since the Unix epoch), so tests can move time. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock that only moves when told to: for tests of windows, bans and the sunset. */
export class ManualClock implements Clock {
  constructor(private ms: number) {}
  now(): number {
    return this.ms
  }
  set(ms: number): void {
    this.ms = ms
  }
  advance(ms: number): void {
    this.ms += ms
  }
}
