import { rateLimitHeaderDocs } from '../../http/openapi-docs.js'
import { ADMIN_AUTH, type AdminApp, changeContext, errorResponses } from '../common/routes.js'
import { ref } from '../common/schemas.js'
import { AdminCustomerSchema, type AdminCustomersOptions, CustomerIdParams, tags } from './schemas.js'
import { customerJson } from './views.js'

/** GET /customers/{customerId} (getCustomer). */
export function getCustomer(app: AdminApp, { customers }: AdminCustomersOptions): void {
  app.get(
    '/customers/:customerId',
    {
      config: ADMIN_AUTH,
      schema: {
        operationId: 'getCustomer',
        summary: 'Get a customer',
        description: 'Its keys: `GET /admin/v1/keys?customerId=…`.',
        tags,
        params: CustomerIdParams,
        response: {
          200: { description: 'The customer.', ...ref(AdminCustomerSchema), headers: rateLimitHeaderDocs },
          ...errorResponses(400, 401, 404, 429, 500, 503),
        },
      },
    },
    async (request) => customerJson(await customers.getCustomer(request.params.customerId, changeContext(request))),
  )
}
