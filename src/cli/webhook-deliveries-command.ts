import { deliveryDetailJson, deliveryJson } from '../admin/webhook-endpoints/delivery-views.js'
import { escapeControlCharacters } from '../shared/control-characters.js'
import { readDateTime } from '../shared/date-time.js'
import type { DeliveryAttemptRecord, WebhookDeliveryRecord } from '../webhooks/delivery.js'
import { cliChange, withServices } from './command-domain.js'
import { UsageError } from './command-errors.js'
import { defineCommand, positiveInt } from './command-line.js'
import { iso } from './key-text.js'
import { print } from './output.js'
import { table } from './table.js'

/*
 * The delivery log of `animal-store webhooks`: the same service as the admin API's
 * /webhook-endpoints/{id}/deliveries, retry and replay. A retry or a replay makes deliveries due;
 * a running server sends them (the CLI never delivers).
 */

const json = (what: string) => ({ type: 'boolean', help: `print ${what} as one line of JSON` }) as const
const status = (d: WebhookDeliveryRecord) =>
  d.status === 'pending' && d.nextAttemptAt !== null ? `pending (next ${iso(d.nextAttemptAt)})` : d.status

function deliveryText(d: WebhookDeliveryRecord, attempts: DeliveryAttemptRecord[]): string {
  const rows: Array<[string, string]> = [
    ['Delivery', d.id],
    ['Endpoint', d.endpointId],
    ['Event', `${d.eventId} (${d.eventType})`],
    ['Status', status(d)],
    ['Attempts', String(d.attempts)],
    ['Created', iso(d.createdAt) ?? '-'],
  ]
  const head = rows.map(([k, v]) => `${(k + ':').padEnd(10)}${v}\n`).join('')
  if (attempts.length === 0) return head
  return `${head}\n${table(
    ['#', 'STARTED', 'MS', 'STATUS', 'ERROR'],
    attempts.map((a) => [
      String(a.attempt),
      iso(a.startedAt) ?? '-',
      a.durationMs === null ? '-' : String(a.durationMs),
      a.statusCode === null ? '-' : String(a.statusCode),
      a.error === null ? '-' : escapeControlCharacters(a.error),
    ]),
  )}`
}

const list = defineCommand(
  {
    path: 'webhooks deliveries',
    synopsis: 'ENDPOINT_ID [--limit N] [--json]',
    description: 'Lists the newest deliveries of a webhook endpoint (its delivery log): event, status, attempts, the last answer.',
    flags: {
      limit: { type: 'string', value: 'N', help: 'how many, 1 to 100 (default 20)' },
      json: json('the admin API\'s answer to GET /admin/v1/webhook-endpoints/ENDPOINT_ID/deliveries ({"data":[…],"nextAfter"})'),
    },
    operands: ['ENDPOINT_ID'],
  },
  ({ values, operands: [id] }) => {
    const limit = positiveInt('--limit', values.limit) ?? 20
    return (run) =>
      withServices(run, async (services) => {
        const page = await services.webhookDeliveries.listDeliveries(id!, { limit })
        const text =
          page.deliveries.length === 0
            ? 'No deliveries.\n'
            : table(
                ['DELIVERY', 'EVENT', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST'],
                page.deliveries.map((d) => [
                  d.id,
                  d.eventId,
                  d.eventType,
                  status(d),
                  String(d.attempts),
                  d.lastError === null
                    ? d.lastStatusCode === null
                      ? '-'
                      : String(d.lastStatusCode)
                    : escapeControlCharacters(d.lastError),
                ]),
              )
        print(values.json, { data: page.deliveries.map(deliveryJson), nextAfter: page.nextAfter }, text)
      })
  },
)

const show = defineCommand(
  {
    path: 'webhooks delivery',
    synopsis: 'ENDPOINT_ID DELIVERY_ID [--json]',
    description: 'Shows one delivery and every attempt of it: when, how long, the answer or why there was none.',
    flags: { json: json("the admin API's answer to GET /admin/v1/webhook-endpoints/ENDPOINT_ID/deliveries/DELIVERY_ID") },
    operands: ['ENDPOINT_ID', 'DELIVERY_ID'],
  },
  ({ values, operands: [endpointId, deliveryId] }) =>
    (run) =>
      withServices(run, async (services) => {
        const found = await services.webhookDeliveries.getDelivery(endpointId!, deliveryId!)
        print(values.json, deliveryDetailJson(found), deliveryText(found.delivery, found.attempts))
      }),
)

const retry = defineCommand(
  {
    path: 'webhooks retry',
    synopsis: 'ENDPOINT_ID DELIVERY_ID [--json]',
    description: 'Makes a delivery due now, whatever its status (one given up included): a running server sends it within a second.',
    flags: { json: json("the admin API's answer to POST …/deliveries/DELIVERY_ID/retry") },
    operands: ['ENDPOINT_ID', 'DELIVERY_ID'],
  },
  ({ values, operands: [endpointId, deliveryId] }) =>
    (run) =>
      withServices(run, async (services) => {
        const retried = await services.webhookDeliveries.retryDelivery(endpointId!, deliveryId!, cliChange())
        print(values.json, deliveryJson(retried), `Delivery ${retried.id} is due now; a running server sends it.\n`)
      }),
)

const replay = defineCommand(
  {
    path: 'webhooks replay',
    synopsis: 'ENDPOINT_ID --since ISO [--json]',
    description:
      'Sends a webhook endpoint every event it receives since a time again (still in the event log): each made due now; a running server sends them.',
    flags: {
      since: { type: 'string', value: 'ISO', help: 'an ISO 8601 date and time with an offset, e.g. 2026-11-28T00:00:00Z' },
      json: json('{"enqueued":N}, the admin API\'s answer to POST /admin/v1/webhook-endpoints/ENDPOINT_ID/replay,'),
    },
    operands: ['ENDPOINT_ID'],
  },
  ({ values, operands: [id] }) => {
    if (values.since === undefined) throw new UsageError('webhooks replay needs --since')
    const reading = readDateTime(values.since)
    if (!('ms' in reading))
      throw new UsageError(
        `--since must be an ISO 8601 date and time with an offset, e.g. 2026-11-28T00:00:00Z (got ${JSON.stringify(values.since)})`,
      )
    return (run) =>
      withServices(run, async (services) => {
        const enqueued = await services.webhookDeliveries.replay(id!, reading.ms, cliChange())
        print(values.json, { enqueued }, `${enqueued} deliveries of ${id} are due now; a running server sends them.\n`)
      })
  },
)

/** The delivery log's commands, in the `webhooks` group. */
export const DELIVERY_COMMANDS = { deliveries: list, delivery: show, retry, replay }
