import type { AdminApp } from '../common/routes.js'
import { CreateCustomerBody, createCustomer } from './create.js'
import { getCustomer } from './get.js'
import { CustomerPageSchema, listCustomers } from './list.js'
import { AdminCustomerSchema, type AdminCustomersOptions } from './schemas.js'
import { UpdateCustomerBody, updateCustomer } from './update.js'
import { getCustomerUsageHistory } from './usage.js'

export type { AdminCustomersOptions } from './schemas.js'

/** The customers resource (/customers…): its shared schemas, in the order of the document's components. */
export const CUSTOMER_SCHEMAS = [AdminCustomerSchema, CreateCustomerBody, UpdateCustomerBody, CustomerPageSchema]

/** Its operations, in the order of the document's paths. */
export function customerRoutes(app: AdminApp, options: AdminCustomersOptions): void {
  for (const route of [createCustomer, listCustomers, getCustomer, updateCustomer, getCustomerUsageHistory]) route(app, options)
}
