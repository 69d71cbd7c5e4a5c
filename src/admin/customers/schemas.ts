import { type Static, Type } from 'typebox'
import type { CustomerService } from '../../customers/customer-service.js'
import { NOT_BLANK } from '../../http/validation.js'
import { MAX_METADATA_BYTES } from '../../keys/administration.js'
import { HIDDEN_CHARACTERS_TEXT, NO_CONTROL_CHARACTERS } from '../../shared/control-characters.js'
import { MAX_CUSTOM_LIMIT } from '../../shared/plans.js'
import type { AdminRoutesOptions } from '../common/routes.js'
import { customerId, nullableObject, plan, time } from '../common/schemas.js'

/** The customer as every customer operation answers it, and the fields the operations that write one read. */

/** What the customers resource needs beside the others: the customer service. */
export interface AdminCustomersOptions extends AdminRoutesOptions {
  customers: Pick<CustomerService, 'createCustomer' | 'listCustomers' | 'getCustomer' | 'updateCustomer' | 'usageHistory'>
}

export const customerName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: NOT_BLANK,
  allOf: [{ pattern: NO_CONTROL_CHARACTERS }],
  description: `The customer's name: 1 to 100 characters, not only white space, no control characters, no text-direction or invisible characters (${HIDDEN_CHARACTERS_TEXT}).`,
  example: 'Acme Corp',
})
export const limit = (window: string) =>
  Type.Integer({
    minimum: 1,
    maximum: MAX_CUSTOM_LIMIT,
    description: `Requests per ${window} for all the customer's keys together: Enterprise only (required there, both limits); other plans have the plan's fixed limits.`,
  })
export const metadata = Type.Unsafe<Record<string, unknown> | null>({
  ...nullableObject(
    `A JSON object for the operator (account number, contract, …), at most ${MAX_METADATA_BYTES} bytes as JSON; null clears it. Never interpreted by the service.`,
  ),
  example: { account: 'A-1042' },
})

export const CustomerIdParams = Type.Object({ customerId: customerId('The customer id (cus_…).') })

export const AdminCustomerSchema = Type.Object(
  {
    id: Type.String({ description: 'Customer id (cus_…): keys created with it as customerId belong to the customer.' }),
    name: Type.String({ description: 'The name given at creation or by an update.' }),
    plan,
    perMinute: Type.Integer({ description: 'Requests per clock minute, for all the customer’s keys together.' }),
    perDay: Type.Integer({ description: 'Requests per UTC day, for all the customer’s keys together.' }),
    metadata: nullableObject('The operator’s JSON object, or null.'),
    createdAt: time('When the customer was created.'),
    updatedAt: time('When the customer was last changed.'),
  },
  {
    $id: 'AdminCustomer',
    title: 'AdminCustomer',
    additionalProperties: false,
    description:
      'A customer: its keys share one quota (minute, day and ban, exact across instances), take its plan and limits, and see the same orders.',
  },
)
export type AdminCustomer = Static<typeof AdminCustomerSchema>

export const tags = ['customers']
