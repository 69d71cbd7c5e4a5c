import { webhookEndpointJson } from '../admin/webhook-endpoints/views.js'
import type { ChangeContext } from '../changes/audit-log.js'
import { escapeControlCharacters } from '../shared/control-characters.js'
import { ENDPOINT_STATES, type ListWebhookEndpointsQuery, type WebhookEndpointRecord } from '../webhooks/endpoint.js'
import type { WebhookEndpointService } from '../webhooks/endpoint-service.js'
import { cliChange, withServices } from './command-domain.js'
import { UsageError } from './command-errors.js'
import { type CommandGroup, type CommandRun, defineCommand, programName } from './command-line.js'
import { iso } from './key-text.js'
import { print } from './output.js'
import { table } from './table.js'
import { DELIVERY_COMMANDS } from './webhook-deliveries-command.js'

/** The webhook endpoint service of a domain built for the command, closed after `work`; changes audited under the OS user. */
const withService = (run: CommandRun, work: (service: WebhookEndpointService, ctx: ChangeContext) => Promise<void>) =>
  withServices(run, (services) => work(services.webhookEndpoints, cliChange()))

const ENDPOINT_ID = ['ENDPOINT_ID'] as const
const json = (what: string) => ({ type: 'boolean', help: `print ${what} as one line of JSON` }) as const
const flag = {
  url: {
    type: 'string',
    value: 'URL',
    help: 'where the events are sent: https, and a host that is, and resolves only to, public addresses',
  },
  events: {
    type: 'string',
    value: 'TYPES',
    help: 'the event types it receives, comma-separated (order.placed,order.expired), or * for every type',
  },
  description: { type: 'string', value: 'TEXT', help: 'what it is for: 1 to 200 characters' },
} as const

/** `--events a,b` as the service checks them (an empty item is kept, and refused there). */
const eventList = (raw: string | undefined) => raw?.split(',').map((t) => t.trim())

function details(e: WebhookEndpointRecord): string {
  const rows: Array<[string, string]> = [
    ['Endpoint', e.id],
    ['URL', escapeControlCharacters(e.url)],
    ['Events', e.events.join(', ')],
    ['Customer', e.customerId ?? '- (every event)'],
    ['State', e.enabled ? 'enabled' : `disabled (${e.disabledReason})`],
    ['Failing', e.failingSince === null ? '-' : `since ${iso(e.failingSince)}`],
    ['Previous secret', e.previousSecretExpiresAt === null ? '-' : `signs until ${iso(e.previousSecretExpiresAt)}`],
    ['Created', iso(e.createdAt) ?? '-'],
    ['Updated', iso(e.updatedAt) ?? '-'],
    ['Description', e.description === null ? '-' : escapeControlCharacters(e.description)],
  ]
  return rows.map(([k, v]) => `${(k + ':').padEnd(17)}${v}\n`).join('')
}

/** The secret, this once, in words that say so. */
const secretText = (secret: string, what: string) =>
  `This is the only time ${what} is shown; give it to the receiver, which verifies every delivery with it:\n\n  ${secret}\n\n`

const create = defineCommand(
  {
    path: 'webhooks create',
    synopsis: '--url URL --events TYPES|* [--customer CUSTOMER_ID] [--description TEXT] [--json]',
    description:
      'Creates a webhook endpoint, enabled at once, and prints its signing secret (whsec_…) this once. Without --customer it receives every event of its types; with it, only that customer’s.',
    flags: {
      url: flag.url,
      events: flag.events,
      customer: { type: 'string', value: 'CUSTOMER_ID', help: 'only the events of this customer (its orders, its keys)' },
      description: flag.description,
      json: json('{"secret","endpoint"}, the admin API\'s answer to POST /admin/v1/webhook-endpoints,'),
    },
  },
  ({ values }) => {
    if (values.url === undefined) throw new UsageError('webhooks create needs --url')
    if (values.events === undefined) throw new UsageError('webhooks create needs --events (types, or *)')
    const input = { url: values.url, events: eventList(values.events) ?? [], customerId: values.customer, description: values.description }
    return (run) =>
      withService(run, async (service, ctx) => {
        const created = await service.createEndpoint(input, ctx)
        print(
          values.json,
          { secret: created.secret, endpoint: webhookEndpointJson(created) },
          `Created webhook endpoint ${created.id}.\n${secretText(created.secret, 'its secret')}${details(created)}`,
        )
      })
  },
)

const list = defineCommand(
  {
    path: 'webhooks list',
    synopsis: '[--customer CUSTOMER_ID] [--state enabled|disabled] [--json]',
    description: 'Lists every webhook endpoint that matches, in ascending id order; never a secret.',
    flags: {
      customer: { type: 'string', value: 'CUSTOMER_ID', help: 'the endpoints of this customer only' },
      state: { type: 'string', value: 'STATE', help: `${ENDPOINT_STATES.join(' or ')} endpoints only` },
      json: json('the admin API\'s answer to GET /admin/v1/webhook-endpoints ({"data":[…],"nextAfter"})'),
    },
  },
  ({ values }) =>
    (run) =>
      withService(run, async (service) => {
        const all: WebhookEndpointRecord[] = []
        let after: string | undefined
        do {
          const query = { customerId: values.customer, state: values.state, limit: 100, after } as ListWebhookEndpointsQuery
          const page = await service.listEndpoints(query)
          all.push(...page.endpoints)
          after = page.nextAfter ?? undefined
        } while (after !== undefined)
        const text =
          all.length === 0
            ? 'No webhook endpoints.\n'
            : table(
                ['ID', 'STATE', 'CUSTOMER', 'EVENTS', 'URL'],
                all.map((e) => [
                  e.id,
                  e.enabled ? 'enabled' : `disabled (${e.disabledReason})`,
                  e.customerId ?? '-',
                  e.events.join(','),
                  escapeControlCharacters(e.url),
                ]),
              )
        print(values.json, { data: all.map(webhookEndpointJson), nextAfter: null }, text)
      }),
)

const show = defineCommand(
  {
    path: 'webhooks show',
    synopsis: 'ENDPOINT_ID [--json]',
    description: 'Shows a webhook endpoint, never its secret.',
    flags: { json: json("the admin API's answer to GET /admin/v1/webhook-endpoints/ENDPOINT_ID") },
    operands: ENDPOINT_ID,
  },
  ({ values, operands: [id] }) =>
    (run) =>
      withService(run, async (service) => {
        const endpoint = await service.getEndpoint(id!)
        print(values.json, webhookEndpointJson(endpoint), details(endpoint))
      }),
)

const update = defineCommand(
  {
    path: 'webhooks update',
    synopsis: 'ENDPOINT_ID [--url URL] [--events TYPES|*] [--enable|--disable] [--description TEXT|none] [--json]',
    description:
      'Changes the fields given. --disable stops the deliveries; --enable starts a disabled endpoint again, afresh (whatever disabled it).',
    flags: {
      url: flag.url,
      events: flag.events,
      enable: { type: 'boolean', help: 'send it events again' },
      disable: { type: 'boolean', help: 'send it no events until enabled' },
      description: { type: 'string', value: 'TEXT|none', help: 'a new description, or none to clear it' },
      json: json("the admin API's answer to PATCH /admin/v1/webhook-endpoints/ENDPOINT_ID"),
    },
    operands: ENDPOINT_ID,
  },
  ({ values, operands: [id] }) => {
    if (values.enable && values.disable) throw new UsageError('webhooks update takes --enable or --disable, not both')
    const patch = {
      ...(values.url === undefined ? {} : { url: values.url }),
      ...(values.events === undefined ? {} : { events: eventList(values.events) }),
      ...(values.enable ? { enabled: true } : values.disable ? { enabled: false } : {}),
      ...(values.description === undefined ? {} : { description: values.description === 'none' ? null : values.description }),
    }
    if (Object.keys(patch).length === 0)
      throw new UsageError('webhooks update needs at least one of --url, --events, --enable, --disable, --description')
    return (run) =>
      withService(run, async (service, ctx) => {
        const endpoint = await service.updateEndpoint(id!, patch, ctx)
        print(values.json, webhookEndpointJson(endpoint), `Updated ${endpoint.id}.\n${details(endpoint)}`)
      })
  },
)

const remove = defineCommand(
  {
    path: 'webhooks delete',
    synopsis: 'ENDPOINT_ID',
    description: `Deletes a webhook endpoint: no more events are sent to it. To pause it instead: ${programName()} webhooks update ENDPOINT_ID --disable.`,
    flags: {},
    operands: ENDPOINT_ID,
  },
  ({ operands: [id] }) =>
    (run) =>
      withService(run, async (service, ctx) => {
        await service.deleteEndpoint(id!, ctx)
        process.stdout.write(`Deleted webhook endpoint ${id}.\n`)
      }),
)

const rotateSecret = defineCommand(
  {
    path: 'webhooks rotate-secret',
    synopsis: 'ENDPOINT_ID [--expires-in SECONDS] [--json]',
    description:
      'Makes a new signing secret and prints it this once; the current one keeps signing beside it (both signatures on every delivery) for --expires-in seconds, so the receiver can switch without failing a delivery.',
    flags: {
      'expires-in': {
        type: 'string',
        value: 'SECONDS',
        help: 'how long the current secret keeps signing: 0 to 604800 (default 86400, 24 hours; 0: it stops now)',
      },
      json: json('{"secret","endpoint"}, the admin API\'s answer to POST /admin/v1/webhook-endpoints/ENDPOINT_ID/rotate-secret,'),
    },
    operands: ENDPOINT_ID,
  },
  ({ values, operands: [id] }) => {
    const raw = values['expires-in']
    if (raw !== undefined && !/^\d+$/.test(raw))
      throw new UsageError(`--expires-in must be a whole number of seconds (got ${JSON.stringify(raw)})`)
    const input = raw === undefined ? {} : { expiresInSeconds: Number(raw) }
    return (run) =>
      withService(run, async (service, ctx) => {
        const rotated = await service.rotateSecret(id!, input, ctx)
        print(
          values.json,
          { secret: rotated.secret, endpoint: webhookEndpointJson(rotated) },
          `Rotated the secret of ${rotated.id}.\n${secretText(rotated.secret, 'the new secret')}${details(rotated)}`,
        )
      })
  },
)

export const WEBHOOKS: CommandGroup = {
  name: 'webhooks',
  description: 'Webhook endpoints: the same service as the admin API (/admin/v1/webhook-endpoints); events are sent to them, signed.',
  commands: { create, list, show, update, delete: remove, 'rotate-secret': rotateSecret, ...DELIVERY_COMMANDS },
}
