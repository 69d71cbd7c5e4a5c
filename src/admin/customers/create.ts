import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { plan, ref } from '../common/schemas.js'
import { AdminCustomerSchema, type AdminCustomersOptions, customerName, limit, metadata, tags } from './schemas.js'
import { customerJson } from './views.js'

export const CreateCustomerBody = Type.Object(
  {
    name: customerName,
    plan,
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    metadata: Type.Optional(metadata),
  },
  { $id: 'CreateCustomer', title: 'CreateCustomer', additionalProperties: false },
)
export type CreateCustomerBody = Static<typeof CreateCustomerBody>

/** POST /customers (createCustomer). */
export function createCustomer(app: AdminApp, { customers }: AdminCustomersOptions): void {
  app.post(
    '/customers',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'createCustomer',
        summary: 'Create a customer',
        description:
          'Creates a customer on a plan (Enterprise needs perMinute and perDay; other plans refuse them). ' +
          'Keys created with its id as `customerId` take its plan and share one quota. Written to the audit log.',
        tags,
        body: ref(CreateCustomerBody),
        response: {
          201: {
            description: 'Created.',
            ...ref(AdminCustomerSchema),
            headers: {
              ...rateLimitHeaderDocs,
              Location: { type: 'string', description: 'Path of the new customer, /admin/v1/customers/{customerId}.' },
            },
          },
          ...errorResponses(400, 401, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const created = await customers.createCustomer(request.body, changeContext(request))
      return reply.code(201).header('location', `${ADMIN_PREFIX}/customers/${created.id}`).send(customerJson(created))
    },
  )
}
