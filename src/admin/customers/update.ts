import { type Static, Type } from 'typebox'
import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ApiError } from '../../shared/errors.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { plan, ref } from '../common/schemas.js'
import { AdminCustomerSchema, type AdminCustomersOptions, CustomerIdParams, customerName, limit, metadata, tags } from './schemas.js'
import { customerJson } from './views.js'

export const UpdateCustomerBody = Type.Object(
  {
    name: Type.Optional(customerName),
    plan: Type.Optional(plan),
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    metadata: Type.Optional(metadata),
  },
  {
    $id: 'UpdateCustomer',
    title: 'UpdateCustomer',
    additionalProperties: false,
    description: 'Only the fields sent change (at least one); null clears metadata.',
  },
)
export type UpdateCustomerBody = Static<typeof UpdateCustomerBody>

/** PATCH /customers/{customerId} (updateCustomer). */
export function updateCustomer(app: AdminApp, { customers }: AdminCustomersOptions): void {
  app.patch(
    '/customers/:customerId',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'updateCustomer',
        summary: 'Update a customer',
        description:
          'Changes name, plan, limits or metadata: only the fields sent. A plan or limit change applies to every key of the customer ' +
          '(in the same transaction; every instance applies it within 2 s). Written to the audit log.',
        tags,
        params: CustomerIdParams,
        body: ref(UpdateCustomerBody),
        response: {
          200: { description: 'The customer as updated.', ...ref(AdminCustomerSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request) => {
      if (Object.keys(request.body).length === 0)
        throw new ApiError('invalid_request', 'body must name at least one field to change: name, plan, perMinute, perDay, metadata')
      return customerJson(await customers.updateCustomer(request.params.customerId, request.body, changeContext(request)))
    },
  )
}
