import type { AuditAction } from '../changes/audit-actions.js'
import type { ChangeContext } from '../changes/audit-log.js'
import type { ChangeRecorder } from '../changes/change-recorder.js'
import type { CustomerRepository } from '../customers/repository.js'
import { type Clock, systemClock } from '../shared/clock.js'
import { invalid, notFound } from '../shared/refusal.js'
import { type DestinationRules, judgeDestination } from './destination.js'
import {
  type CreateWebhookEndpointInput,
  generateWebhookEndpointId,
  type ListWebhookEndpointsQuery,
  type RotateWebhookSecretInput,
  type UpdateWebhookEndpointInput,
  type WebhookEndpointPage,
  type WebhookEndpointRecord,
} from './endpoint.js'
import { endpointAuditDetails as describe } from './endpoint-document.js'
import {
  checkDescription,
  checkEnabled,
  checkEvents,
  checkListQuery,
  checkPreviousSecretSeconds,
  checkUrlText,
} from './endpoint-validation.js'
import type { WebhookEndpointRepository, WebhookEndpointUpdate } from './repository.js'
import { DEFAULT_PREVIOUS_SECRET_SECONDS, newWebhookSecret } from './secret.js'

export interface WebhookEndpointServiceOptions {
  endpoints: WebhookEndpointRepository
  /** Makes every audit entry of the service (changes/). */
  recorder: ChangeRecorder
  /** An endpoint of a customer receives only its events: the customer must exist. */
  customers: Pick<CustomerRepository, 'findCustomerById'>
  /** Where an endpoint's URL may point (WEBHOOK_ALLOW_PRIVATE_NETWORKS, and the resolver of host names). */
  destinations: DestinationRules
  clock?: Clock
}

/** Optimistic updates retry this often when another writer (a delivery marking it failing) changed the endpoint in between. */
const MAX_ATTEMPTS = 5

const FIELDS = ['url', 'description', 'events', 'enabled'] as const

/**
 * Webhook endpoints, for the admin API and the CLI: every rule of their input (the URL's
 * destination, the closed list of event types, the customer), their secrets (made here, shown once
 * by the caller, rotated with the old one signing beside the new for a while) and their audit
 * (`webhook_endpoint.create`, `.update`, `.delete`, `.rotate_secret`, and the reads with a context).
 * No audit entry holds a secret.
 */
export class WebhookEndpointService {
  private readonly clock: Clock

  constructor(private readonly options: WebhookEndpointServiceOptions) {
    this.clock = options.clock ?? systemClock
  }

  /** The new endpoint, its secret included: the caller shows it this once. */
  async createEndpoint(input: CreateWebhookEndpointInput, ctx: ChangeContext): Promise<WebhookEndpointRecord> {
    const url = await this.checkUrl(input.url)
    const events = checkEvents(input.events)
    const description = checkDescription(input.description)
    const customerId = input.customerId === undefined ? null : await this.checkCustomer(input.customerId)
    const now = this.clock.now()
    const record: WebhookEndpointRecord = {
      id: generateWebhookEndpointId(),
      url,
      description,
      events,
      customerId,
      enabled: true,
      secret: newWebhookSecret(),
      previousSecret: null,
      previousSecretExpiresAt: null,
      failingSince: null,
      disabledReason: null,
      createdAt: now,
      updatedAt: now,
    }
    await this.options.endpoints.insertEndpoint(
      record,
      this.options.recorder.change(ctx, now, { action: 'webhook_endpoint.create', details: describe(record) }),
    )
    return record
  }

  async listEndpoints(query: ListWebhookEndpointsQuery, ctx?: ChangeContext): Promise<WebhookEndpointPage> {
    checkListQuery(query)
    if (query.customerId !== undefined) await this.checkCustomer(query.customerId)
    const { limit, after, customerId, state } = query
    const rows = await this.options.endpoints.pageEndpoints({ ...query, limit: limit + 1 })
    const page = rows.slice(0, limit)
    await this.recordRead(ctx, 'webhook_endpoint.list', { customerId, state, limit, after })
    return { endpoints: page, nextAfter: rows.length > limit ? page[page.length - 1]!.id : null }
  }

  async getEndpoint(id: string, ctx?: ChangeContext): Promise<WebhookEndpointRecord> {
    const record = await this.find(id)
    await this.recordRead(ctx, 'webhook_endpoint.read', { endpointId: id })
    return record
  }

  /**
   * Changes the fields given. Disabling records why (`manual`); enabling a disabled endpoint clears
   * why it was disabled and since when it was failing, so it starts afresh.
   */
  async updateEndpoint(id: string, patch: UpdateWebhookEndpointInput, ctx: ChangeContext): Promise<WebhookEndpointRecord> {
    const url = patch.url === undefined ? undefined : await this.checkUrl(patch.url)
    const events = patch.events === undefined ? undefined : checkEvents(patch.events)
    const description = patch.description === undefined ? undefined : checkDescription(patch.description)
    const enabled = patch.enabled === undefined ? undefined : checkEnabled(patch.enabled)
    for (let attempt = 1; ; attempt++) {
      const current = await this.find(id)
      const now = this.clock.now()
      const next: WebhookEndpointUpdate = {
        ...current,
        url: url ?? current.url,
        events: events ?? current.events,
        description: description === undefined ? current.description : description,
        ...switched(current, enabled),
        updatedAt: Math.max(now, current.updatedAt + 1),
      }
      const changed = FIELDS.filter((f) => JSON.stringify(current[f]) !== JSON.stringify(next[f]))
      if (changed.length === 0) {
        // Nothing to write, but a successful call all the same: on record, as a read is.
        await this.recordRead(ctx, 'webhook_endpoint.update', { ...describe(current), changed })
        return current
      }
      const updated = await this.options.endpoints.updateEndpoint(
        id,
        current.updatedAt,
        next,
        this.options.recorder.change(ctx, now, {
          action: 'webhook_endpoint.update',
          details: { ...describe({ ...current, ...next }), changed },
        }),
      )
      if (updated !== undefined) return updated
      if (attempt >= MAX_ATTEMPTS) throw new Error(`webhook endpoint ${id} kept changing during the update; try again`)
    }
  }

  async deleteEndpoint(id: string, ctx: ChangeContext): Promise<WebhookEndpointRecord> {
    const now = this.clock.now()
    const deleted = await this.options.endpoints.deleteEndpoint(id, (endpoint) =>
      this.options.recorder.change(ctx, now, { action: 'webhook_endpoint.delete', details: describe(endpoint) }),
    )
    if (deleted === undefined) throw notFound('webhook_endpoint', id)
    return deleted
  }

  /**
   * A new secret; the current one keeps signing beside it for `expiresInSeconds` (default 24 h, 0:
   * not at all), so a receiver can take the new one without losing a delivery. A secret rotated
   * before and still signing stops now: two secrets sign at most. Returns the endpoint with its new
   * secret, which the caller shows this once.
   */
  async rotateSecret(id: string, input: RotateWebhookSecretInput, ctx: ChangeContext): Promise<WebhookEndpointRecord> {
    const seconds = checkPreviousSecretSeconds(input.expiresInSeconds ?? DEFAULT_PREVIOUS_SECRET_SECONDS)
    for (let attempt = 1; ; attempt++) {
      const current = await this.find(id)
      const now = this.clock.now()
      const previousSecretExpiresAt = seconds === 0 ? null : now + seconds * 1000
      const next: WebhookEndpointUpdate = {
        ...current,
        secret: newWebhookSecret(),
        previousSecret: seconds === 0 ? null : current.secret,
        previousSecretExpiresAt,
        updatedAt: Math.max(now, current.updatedAt + 1),
      }
      const updated = await this.options.endpoints.updateEndpoint(
        id,
        current.updatedAt,
        next,
        this.options.recorder.change(ctx, now, {
          action: 'webhook_endpoint.rotate_secret',
          details: { endpointId: id, previousSecretExpiresAt },
        }),
      )
      if (updated !== undefined) return updated
      if (attempt >= MAX_ATTEMPTS) throw new Error(`webhook endpoint ${id} kept changing during the rotation; try again`)
    }
  }

  private async checkUrl(raw: unknown): Promise<string> {
    const verdict = await judgeDestination(checkUrlText(raw), this.options.destinations)
    if ('problem' in verdict) throw invalid('url', (name) => `${name('url')} ${verdict.problem}`)
    return verdict.url.href
  }

  /** A customer named in the input: unknown is bad input naming the field (400), as for a key. */
  private async checkCustomer(id: string): Promise<string> {
    const customer = await this.options.customers.findCustomerById(id)
    if (customer === undefined) throw invalid('customerId', (name) => `${name('customerId')}: no customer with id ${id}`)
    return customer.id
  }

  private async find(id: string): Promise<WebhookEndpointRecord> {
    const record = await this.options.endpoints.findEndpointById(id)
    if (record === undefined) throw notFound('webhook_endpoint', id)
    return record
  }

  /** Endpoints are not keys: an entry's keyId is null, its details name the endpoint. */
  private recordRead(ctx: ChangeContext | undefined, action: AuditAction, details: Record<string, unknown>): Promise<void> {
    return this.options.recorder.read(ctx, { action, details })
  }
}

/** The fields an enabling or disabling changes: enabled afresh, or disabled by an operator (an endpoint disabled already keeps its reason). */
function switched(current: WebhookEndpointRecord, enabled: boolean | undefined): Partial<WebhookEndpointUpdate> {
  if (enabled === undefined || enabled === current.enabled) return {}
  return enabled ? { enabled, disabledReason: null, failingSince: null } : { enabled, disabledReason: 'manual' }
}
