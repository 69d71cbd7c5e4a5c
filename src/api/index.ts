import type { FastifyInstance } from 'fastify'
import type { AddressRefusals } from '../auth/address-refusals.js'
import type { Config } from '../config/config.js'
import type { EventRepository } from '../events/event.js'
import type { EntityTags } from '../http/conditional-reads.js'
import { registerOpenApi } from '../http/openapi.js'
import type { KeyAdministration } from '../keys/administration.js'
import { holdRule } from '../orders/hold.js'
import { OrderPlacement } from '../orders/placement.js'
import type { OrderRepository } from '../orders/repository.js'
import { IdempotentCreates } from '../pets/idempotent-creates.js'
import { cachedPets } from '../pets/pet-caches.js'
import type { PetRepository } from '../pets/repository.js'
import { readGithubPublicKeys } from '../secret-scanning/github-keys.js'
import { GithubReports } from '../secret-scanning/github-reports.js'
import type { ScanReportRepository } from '../secret-scanning/repository.js'
import type { Clock } from '../shared/clock.js'
import { type PublicApp, type PublicRoutesOptions, V1_PREFIX } from './common/routes.js'
import { EVENT_SCHEMAS, eventRoutes } from './events/index.js'
import { eventWebhooks } from './events/webhooks.js'
import { publicApiDescription } from './openapi.js'
import { ORDER_SCHEMAS, orderRoutes } from './orders/index.js'
import { PET_SCHEMAS, petRoutes } from './pets/index.js'
import { RATE_LIMIT_SCHEMAS, rateLimitRoutes } from './rate-limit/index.js'
import { githubSecretScanning, type SecretScanningOptions } from './secret-scanning/github.js'

export interface PublicApiOptions {
  config: Config
  pets: PetRepository
  orders: OrderRepository
  events: EventRepository
  clock: Clock
  /** '' (relative links) or the public base URL. */
  linkBase: string
  /** The tags of the reads' answers (conditional reads). */
  entityTags: EntityTags
  /** What GitHub's secret scanning reports need, when SECRET_SCANNING_PUBLIC_KEYS is set. */
  scanning: {
    admin: Pick<KeyAdministration, 'reportLeak'>
    reports: ScanReportRepository
    refusals: AddressRefusals
  }
}

/**
 * The public API (/v1) as one unit for app.ts: its shared schemas (the document's components), its
 * OpenAPI document and console (/v1/openapi.json, /docs), and every operation under /v1, by
 * resource (pets/, orders/, rate-limit/, one file per operation; what they share in common/), the
 * catalogue read through the one cache of pets; GitHub's secret scanning reports when configured,
 * outside the document. The schemas are added first, all of them, in the order of the document's
 * components; the operations follow in the order of its paths.
 */
export async function registerPublicApi(app: FastifyInstance, options: PublicApiOptions): Promise<void> {
  const { config, clock } = options
  for (const schema of [...PET_SCHEMAS, ...ORDER_SCHEMAS, ...RATE_LIMIT_SCHEMAS, ...EVENT_SCHEMAS]) app.addSchema(schema)
  await registerOpenApi(app, config, { ...publicApiDescription(config), webhooks: eventWebhooks() })
  const pets = cachedPets(options.pets)
  const routes: PublicRoutesOptions = {
    pets,
    creates: new IdempotentCreates(pets, clock),
    orders: options.orders,
    placement: new OrderPlacement(options.orders, clock, holdRule(config.orderHoldMs)),
    holdMs: config.orderHoldMs,
    linkBase: options.linkBase,
    entityTags: options.entityTags,
    clock,
    events: options.events,
  }
  const scanning = secretScanning(options)
  await app.register(
    async (v1: PublicApp) => {
      petRoutes(v1, routes)
      orderRoutes(v1, routes)
      rateLimitRoutes(v1)
      eventRoutes(v1, routes)
      if (scanning !== undefined) githubSecretScanning(v1, scanning)
    },
    { prefix: V1_PREFIX },
  )
}

/** GitHub's keys are read at start: a file that is not in their form stops it, naming what is wrong. */
function secretScanning({ config, clock, scanning }: PublicApiOptions): SecretScanningOptions | undefined {
  if (config.secretScanningPublicKeys === undefined) return undefined
  const { admin, reports, refusals } = scanning
  return {
    keys: readGithubPublicKeys(config.secretScanningPublicKeys),
    reports: new GithubReports({ admin, action: config.secretScanningAction, reports, clock }),
    refusals,
  }
}
