import { userInfo } from 'node:os'
import type { AdminTokenService } from '../admin-tokens/admin-token-service.js'
import type { ChangeContext } from '../changes/audit-log.js'
import type { Config } from '../config/config.js'
import type { CustomerService } from '../customers/customer-service.js'
import type { KeyService } from '../keys/key-service.js'
import type { RateLimiter } from '../limits/limiter.js'
import type { WebhookDeliveryService } from '../webhooks/delivery-service.js'
import type { WebhookEndpointService } from '../webhooks/endpoint-service.js'

/** The services a command calls: the admin API's own, from a domain built for the command. */
export interface CommandServices {
  keys: KeyService
  customers: CustomerService
  adminTokens: AdminTokenService
  webhookEndpoints: WebhookEndpointService
  webhookDeliveries: WebhookDeliveryService
}

/**
 * Builds a command's domain (src/domain.ts: storage opened once, no job started), handed in by
 * src/cli.ts: only an entry point imports the composition root. `limiter` is where `keys usage`
 * reads the counters from.
 */
export type OpenDomain = (
  config: Config,
  options?: { limiter?: Pick<RateLimiter, 'peek'> },
) => Promise<{ services: CommandServices; close(): Promise<void> }>

/** The CLI's changes are audited under the OS user who ran it. */
export const cliChange = (): ChangeContext => ({ actor: { type: 'cli', id: userInfo().username }, requestId: null })

/** Runs `work` on the services of a domain built for it (by the run's `openDomain`), closed after. */
export async function withServices(
  { config, openDomain }: { config: Config; openDomain: OpenDomain },
  work: (services: CommandServices) => Promise<void>,
  options?: Parameters<OpenDomain>[1],
): Promise<void> {
  const domain = await openDomain(config, options)
  try {
    await work(domain.services)
  } finally {
    await domain.close()
  }
}
