import type pg from 'pg'

/**
 * Every key creation and change (update, rotation, revocation), and every admin token created or
 * revoked, NOTIFYs inside its transaction, so a message means a committed change. The channel is
 * the schema's (NOTIFY's channels are per database, not per schema): a service in another schema of
 * the same database, another deployment or a test beside this one, does not wake this one's
 * listeners. Hashed to fit a channel name's 63 bytes whatever the schema's name.
 */
export const KEY_CHANGE_CHANNEL_SQL = "'animal_store_key_changed_' || left(md5(current_schema()), 16)"

const BACKOFF = { initialMs: 100, maxMs: 5_000 } as const
/** LISTEN alone never writes, so a half-open socket would go unnoticed for as long as TCP keepalive takes (minutes). */
const HEARTBEAT_MS = 15_000

type Listener = (hash: string) => void

/**
 * One dedicated connection LISTENing for key changes, shared by every subscriber of a store.
 * It reconnects with jittered exponential backoff whenever the connection drops; messages sent
 * while it is down are lost, which the resolvers' polling of key_changes covers.
 */
export class KeyChangeWatcher {
  // Wrapped so that the same function subscribed twice gets two independent subscriptions.
  private readonly listeners = new Set<{ listener: Listener }>()
  private client: pg.Client | undefined
  private wanted = false
  private closed = false
  private attempt = 0
  private firstAttempt: Promise<void> | undefined
  private retryTimer: NodeJS.Timeout | undefined
  private heartbeat: NodeJS.Timeout | undefined

  constructor(private readonly newClient: () => pg.Client) {}

  /**
   * Resolves once the first connection attempt has settled, connected or not: a store that is
   * down at start must not stop the caller, which still has polling; retries go on meanwhile.
   */
  async subscribe(listener: Listener): Promise<() => Promise<void>> {
    if (this.closed) throw new Error('the store is closed')
    const entry = { listener }
    this.listeners.add(entry)
    if (!this.wanted) {
      this.wanted = true
      this.firstAttempt = this.connect()
    }
    await this.firstAttempt
    return async () => {
      if (!this.listeners.delete(entry)) return
      if (this.listeners.size === 0) await this.stop()
    }
  }

  async close(): Promise<void> {
    this.closed = true
    this.listeners.clear()
    await this.stop()
  }

  private async connect(): Promise<void> {
    const client = this.newClient()
    this.client = client
    let channel: string | undefined
    client.on('notification', (message) => {
      if (message.channel !== channel || !message.payload) return
      for (const { listener } of [...this.listeners]) {
        // A throwing listener must not break the connection's message parsing, nor the others.
        try {
          listener(message.payload)
        } catch {
          /* the listener's own problem */
        }
      }
    })
    client.on('error', () => this.lost(client))
    client.on('end', () => this.lost(client))
    try {
      await client.connect()
      const { rows } = await client.query<{ channel: string }>(`SELECT ${KEY_CHANGE_CHANNEL_SQL} AS channel`)
      channel = rows[0]!.channel
      // Quoted: the name is made of [a-z0-9_] only, so nothing needs escaping.
      await client.query(`LISTEN "${channel}"`)
    } catch {
      this.lost(client)
      return
    }
    if (this.client !== client) return // stopped meanwhile; stop() ended it
    this.attempt = 0
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').catch(() => this.lost(client))
    }, HEARTBEAT_MS)
    this.heartbeat.unref()
  }

  /** Idempotent per client: 'error', 'end' and a failed heartbeat may all report the same loss. */
  private lost(client: pg.Client): void {
    if (this.client !== client) return
    this.client = undefined
    this.clearTimers()
    client.end().catch(() => {})
    if (!this.wanted) return
    const delay = Math.min(BACKOFF.maxMs, BACKOFF.initialMs * 2 ** this.attempt) * (0.5 + Math.random() / 2)
    this.attempt = Math.min(this.attempt + 1, 16)
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined
      if (this.wanted && this.client === undefined) void this.connect()
    }, delay)
    this.retryTimer.unref()
  }

  private async stop(): Promise<void> {
    this.wanted = false
    this.firstAttempt = undefined
    this.attempt = 0
    this.clearTimers()
    const client = this.client
    this.client = undefined
    await client?.end().catch(() => {})
  }

  private clearTimers(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer)
    if (this.heartbeat) clearInterval(this.heartbeat)
    this.retryTimer = undefined
    this.heartbeat = undefined
  }
}
