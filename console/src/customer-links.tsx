import { ApiError, type KeyPage } from './api.js'
import { type Loaded, useLoad } from './components.js'
import { type AdminCustomer, CUSTOMER_KEYS_SHOWN, customersApi } from './customers-api.js'
import { href } from './router.js'

/** A customer named by id, once read: null when the API has none of that id (shown by its id). */
export type Customers = Map<string, AdminCustomer | null>

/**
 * The customers of a page's rows (keys, orders), each read once: a page names a few customers
 * many times, and the rows show their names rather than their ids.
 */
export function useCustomers(ids: Array<string | null>): Loaded<Customers> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))].sort()
  return useLoad(async () => {
    const read = await Promise.all(
      wanted.map((id) =>
        customersApi.get(id).catch((error: unknown) => {
          if (error instanceof ApiError && error.status === 404) return null
          throw error
        }),
      ),
    )
    return new Map(wanted.map((id, i) => [id, read[i]!]))
  }, [wanted.join(' ')])
}

/** A link to a customer's page, with its name once read (its id until then, or when it is gone). */
export function CustomerLink({ id, customers }: { id: string | null; customers: Customers | undefined }) {
  if (id === null) return <>—</>
  const customer = customers?.get(id)
  return (
    <a href={href.customer(id)} data-customer-id={id}>
      {customer ? customer.name : <code>{id}</code>}
    </a>
  )
}

/** The keys of a customer (the first CUSTOMER_KEYS_SHOWN), or nothing for a key without one. */
export const useCustomerKeys = (customerId: string | null): Loaded<KeyPage | null> =>
  useLoad(async () => (customerId === null ? null : customersApi.keys(customerId)), [customerId])

/** How many keys share the customer's quota: the active ones (a revoked or expired key spends nothing). */
export function sharedBy(keys: KeyPage): { count: number; more: boolean } {
  return { count: keys.data.filter((k) => k.state === 'active').length, more: keys.nextAfter !== null }
}

/** "its 3 active keys" (or "its 100+ keys" past the first page), for the sentences that say the quota is shared. */
export function sharedByText(keys: KeyPage): string {
  const { count, more } = sharedBy(keys)
  if (more) return `its ${CUSTOMER_KEYS_SHOWN}+ keys`
  return count === 1 ? 'its 1 active key' : `its ${count} active keys`
}
