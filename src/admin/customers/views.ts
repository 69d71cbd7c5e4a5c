import type { CustomerRecord } from '../../customers/customer.js'
import { iso } from '../common/views.js'
import type { AdminCustomer } from './schemas.js'

/** A customer as the admin API answers it; the CLI's --json prints the same document. */
export const customerJson = (c: CustomerRecord): AdminCustomer => ({
  id: c.id,
  name: c.name,
  plan: c.plan,
  perMinute: c.perMinute,
  perDay: c.perDay,
  metadata: c.metadata,
  createdAt: iso(c.createdAt),
  updatedAt: iso(c.updatedAt),
})
