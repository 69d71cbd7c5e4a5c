import { type StorageFault, StorageFaultError } from '../shared/outages.js'

/**
 * The storage fault a store last met (disk full, I/O error, corruption, read-only: see
 * StorageFault), kept until a write goes through again. A store's ping() runs `check`, so /readyz
 * says "not ready" with the fault while it lasts, although reads may still work: a load balancer
 * then sends the writes elsewhere, and an operator sees why.
 *
 * What clears a fault is a write the check itself makes (`probe`), not the next request that
 * succeeds: a request that writes nothing (an update to the same value, a delete of no row)
 * succeeds on a full disk too, and an instance the balancer took out gets no request at all.
 */
export class StorageFaults {
  private fault: { kind: StorageFault; error: StorageFaultError } | undefined

  /** `classify` turns an engine's error into an outage error (StorageFaultError for a fault) or returns it as it is. */
  constructor(private readonly classify: (error: unknown) => unknown) {}

  get current(): StorageFault | undefined {
    return this.fault?.kind
  }

  /** The error to throw instead of `error`; a fault is remembered. */
  seen(error: unknown): unknown {
    const classified = this.classify(error)
    if (classified instanceof StorageFaultError) this.fault = { kind: classified.fault, error: classified }
    return classified
  }

  /**
   * `repository` with every method's failures classified (and faults remembered), thrown or
   * rejected alike; what it returns is unchanged. The methods are wrapped once, here.
   */
  watch<T extends object>(repository: T): T {
    const watched = Object.create(repository) as Record<string, unknown>
    for (const name of methodNames(repository)) {
      const method = (repository as Record<string, (...args: unknown[]) => unknown>)[name]!
      const rethrow = (error: unknown): never => {
        throw this.seen(error)
      }
      watched[name] = (...args: unknown[]) => {
        let result: unknown
        try {
          result = method.apply(repository, args)
        } catch (error) {
          rethrow(error)
        }
        return result instanceof Promise ? result.then(undefined, rethrow) : result
      }
    }
    return watched as T
  }

  /**
   * A store's ping: `read` while no fault is known; after one, `probe` (a write that changes
   * nothing but still goes to disk), which clears the fault when it succeeds.
   */
  async check(read: () => unknown, probe: () => unknown): Promise<void> {
    const known = this.fault
    try {
      await (known === undefined ? read() : probe())
    } catch (error) {
      throw this.seen(error)
    }
    if (known !== undefined && this.fault === known) this.fault = undefined
  }
}

/** The methods of a class instance (its prototypes' functions, constructor aside). */
function methodNames(object: object): string[] {
  const names = new Set<string>()
  for (let proto = Object.getPrototypeOf(object); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(proto, name)?.value === 'function') names.add(name)
    }
  }
  return [...names]
}
