import { customerJson } from '../admin/customers/views.js'
import type { ChangeContext } from '../changes/audit-log.js'
import type { CustomerRecord } from '../customers/customer.js'
import type { CustomerService } from '../customers/customer-service.js'
import { escapeControlCharacters } from '../shared/control-characters.js'
import type { PlanName } from '../shared/plans.js'
import { cliChange, withServices } from './command-domain.js'
import { UsageError } from './command-errors.js'
import { type CommandGroup, type CommandRun, defineCommand, positiveInt, programName } from './command-line.js'
import { metadata } from './key-flags.js'
import { iso } from './key-text.js'
import { print } from './output.js'
import { table } from './table.js'

/** The customer service of a domain built for the command, closed after `work`; changes audited under the OS user. */
const withService = (run: CommandRun, work: (service: CustomerService, ctx: ChangeContext) => Promise<void>) =>
  withServices(run, (services) => work(services.customers, cliChange()))

const CUSTOMER_ID = ['CUSTOMER_ID'] as const
const json = (what: string) => ({ type: 'boolean', help: `print ${what} as one line of JSON` }) as const
const flag = {
  name: { type: 'string', value: 'NAME', help: 'the customer: 1 to 100 characters' },
  plan: { type: 'string', value: 'PLAN', help: 'free, pro, business or enterprise: every key of the customer takes it' },
  perMinute: { type: 'string', value: 'N', help: 'enterprise only, with --per-day: requests a minute for all its keys together' },
  perDay: { type: 'string', value: 'M', help: 'enterprise only, with --per-minute: requests a UTC day for all its keys together' },
  metadata: { type: 'string', value: 'JSON', help: 'a JSON object for the operator, at most 4096 bytes' },
} as const

function details(c: CustomerRecord): string {
  const rows: Array<[string, string]> = [
    ['Customer', c.id],
    ['Name', escapeControlCharacters(c.name)],
    ['Plan', `${c.plan}: ${c.perMinute}/min, ${c.perDay}/day (shared by its keys)`],
    ['Created', iso(c.createdAt) ?? '-'],
    ['Updated', iso(c.updatedAt) ?? '-'],
    ['Metadata', c.metadata === null ? '-' : escapeControlCharacters(JSON.stringify(c.metadata))],
  ]
  return rows.map(([k, v]) => `${(k + ':').padEnd(10)}${v}\n`).join('')
}

const create = defineCommand(
  {
    path: 'customers create',
    synopsis: '--name NAME --plan free|pro|business|enterprise [--per-minute N --per-day M] [--metadata JSON] [--json]',
    description: `Creates a customer; its keys (${programName()} keys create --customer ID) share its quota and take its plan.`,
    flags: {
      name: flag.name,
      plan: flag.plan,
      'per-minute': flag.perMinute,
      'per-day': flag.perDay,
      metadata: flag.metadata,
      json: json("the admin API's answer to POST /admin/v1/customers"),
    },
  },
  ({ values }) => {
    if (values.name === undefined) throw new UsageError('customers create needs --name')
    if (values.plan === undefined) throw new UsageError('customers create needs --plan')
    const input = {
      name: values.name,
      plan: values.plan,
      perMinute: positiveInt('--per-minute', values['per-minute']),
      perDay: positiveInt('--per-day', values['per-day']),
      metadata: metadata(values.metadata, false),
    }
    return (run) =>
      withService(run, async (service, ctx) => {
        const created = await service.createCustomer(input, ctx)
        print(values.json, customerJson(created), `Created customer ${created.id}.\n${details(created)}`)
      })
  },
)

const list = defineCommand(
  {
    path: 'customers list',
    synopsis: '[--plan P] [--name TEXT] [--json]',
    description: 'Lists every customer that matches, in ascending id order.',
    flags: {
      plan: { type: 'string', value: 'P', help: 'customers on this plan only' },
      name: { type: 'string', value: 'TEXT', help: 'customers whose name contains TEXT (case-insensitive)' },
      json: json('the admin API\'s answer to GET /admin/v1/customers ({"data":[…],"nextAfter"})'),
    },
  },
  ({ values }) =>
    (run) =>
      withService(run, async (service) => {
        const all: CustomerRecord[] = []
        let after: string | undefined
        do {
          const page = await service.listCustomers({ plan: values.plan as PlanName | undefined, name: values.name, limit: 100, after })
          all.push(...page.customers)
          after = page.nextAfter ?? undefined
        } while (after !== undefined)
        const text =
          all.length === 0
            ? 'No customers.\n'
            : table(
                ['ID', 'PLAN', 'PER MINUTE', 'PER DAY', 'NAME'],
                all.map((c) => [c.id, c.plan, String(c.perMinute), String(c.perDay), escapeControlCharacters(c.name)]),
                [2, 3],
              )
        print(values.json, { data: all.map(customerJson), nextAfter: null }, text)
      }),
)

const show = defineCommand(
  {
    path: 'customers show',
    synopsis: 'CUSTOMER_ID [--json]',
    description: `Shows a customer (its keys: ${programName()} keys list --customer CUSTOMER_ID).`,
    flags: { json: json("the admin API's answer to GET /admin/v1/customers/CUSTOMER_ID") },
    operands: CUSTOMER_ID,
  },
  ({ values, operands: [id] }) =>
    (run) =>
      withService(run, async (service) => {
        const customer = await service.getCustomer(id!)
        print(values.json, customerJson(customer), details(customer))
      }),
)

const update = defineCommand(
  {
    path: 'customers update',
    synopsis: 'CUSTOMER_ID [--name NAME] [--plan P] [--per-minute N --per-day M] [--metadata JSON|none] [--json]',
    description:
      'Changes the fields given; a plan or limit change applies to every key of the customer (running servers within KEY_REFRESH_MS).',
    flags: {
      name: flag.name,
      plan: flag.plan,
      'per-minute': flag.perMinute,
      'per-day': flag.perDay,
      metadata: { type: 'string', value: 'JSON|none', help: 'a new JSON object, or none to clear it' },
      json: json("the admin API's answer to PATCH /admin/v1/customers/CUSTOMER_ID"),
    },
    operands: CUSTOMER_ID,
  },
  ({ values, operands: [id] }) => {
    const patch = {
      ...(values.name === undefined ? {} : { name: values.name }),
      ...(values.plan === undefined ? {} : { plan: values.plan }),
      ...(values['per-minute'] === undefined ? {} : { perMinute: positiveInt('--per-minute', values['per-minute']) }),
      ...(values['per-day'] === undefined ? {} : { perDay: positiveInt('--per-day', values['per-day']) }),
      ...(values.metadata === undefined ? {} : { metadata: metadata(values.metadata, true) }),
    }
    if (Object.keys(patch).length === 0)
      throw new UsageError('customers update needs at least one of --name, --plan, --per-minute, --per-day, --metadata')
    return (run) =>
      withService(run, async (service, ctx) => {
        const customer = await service.updateCustomer(id!, patch, ctx)
        print(values.json, customerJson(customer), `Updated ${customer.id}.\n${details(customer)}`)
      })
  },
)

export const CUSTOMERS: CommandGroup = {
  name: 'customers',
  description: 'Customers: the same service as the admin API (/admin/v1/customers); their keys share one quota.',
  commands: { create, list, show, update },
}
