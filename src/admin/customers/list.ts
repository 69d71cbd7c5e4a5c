import { Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, ADMIN_PREFIX, type AdminApp, changeContext, errorResponses, link, linkHeaderDoc } from '../common/routes.js'
import { ADMIN_LIST_LIMIT, customerId, pageLimit, plan, ref } from '../common/schemas.js'
import { AdminCustomerSchema, type AdminCustomersOptions, tags } from './schemas.js'
import { customerJson } from './views.js'

export const CustomerPageSchema = Type.Object(
  {
    data: Type.Array(ref(AdminCustomerSchema)),
    nextAfter: Type.Union([Type.String(), Type.Null()], {
      description: 'The `after` of the next page (also in the Link rel="next" header); null on the last page.',
    }),
  },
  { $id: 'CustomerPage', title: 'CustomerPage', additionalProperties: false },
)

export const ListCustomersQuery = Type.Object(
  {
    limit: Type.Optional(pageLimit),
    after: Type.Optional(
      customerId('Return customers with an id after this one (ascending id order); follow Link rel="next" rather than build it.'),
    ),
    plan: Type.Optional(plan),
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Only customers whose name contains this (case-insensitive).' }),
    ),
  },
  { additionalProperties: false },
)

/** GET /customers (listCustomers). */
export function listCustomers(app: AdminApp, { customers }: AdminCustomersOptions): void {
  app.get(
    '/customers',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'listCustomers',
        summary: 'List customers',
        description: 'Customers in ascending id order, optionally filtered by plan or name. Paged with `after` (Link rel="next").',
        tags,
        querystring: ListCustomersQuery,
        response: {
          200: { description: 'A page of customers.', ...ref(CustomerPageSchema), headers: { ...rateLimitHeaderDocs, ...linkHeaderDoc } },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_LIST_LIMIT.default, after, plan, name } = request.query
      const page = await customers.listCustomers({ limit, after, plan, name }, changeContext(request))
      if (page.nextAfter !== null) reply.header('link', link(`${ADMIN_PREFIX}/customers`, { limit, plan, name, after: page.nextAfter }))
      return { data: page.customers.map(customerJson), nextAfter: page.nextAfter }
    },
  )
}
