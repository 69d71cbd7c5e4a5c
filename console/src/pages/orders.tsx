import { useState } from 'preact/hooks'
import { type AdminOrder, api, ORDER_STATUSES } from '../api.js'
import { Confirm, ErrorNote, Field, useLoad } from '../components.js'
import { CustomerLink, type Customers, useCustomers } from '../customer-links.js'
import { time } from '../format.js'
import { href, navigate } from '../router.js'
import { useMayChange } from '../session.js'

const PAGE_SIZE = 20

/**
 * Every caller's orders, newest first unless `order=asc` (the API's own default is oldest first:
 * the console asks for `desc`): status, key and customer filters and the order, kept in the
 * address; paged by the API's cursor; each order with its key's name and its customer; Cancel on
 * placed ones.
 */
export function OrderList({ query }: { query: URLSearchParams }) {
  const filters = {
    status: query.get('status') ?? '',
    keyId: query.get('keyId') ?? '',
    customerId: query.get('customerId') ?? '',
    order: query.get('order') === 'asc' ? 'asc' : '',
  }
  const after = query.get('after') ?? undefined
  // The cursors of the pages before this one, for Previous (the API pages forward only).
  const [previous, setPrevious] = useState<Array<string | undefined>>([])
  const [keyId, setKeyId] = useState(filters.keyId)
  const [customerId, setCustomerId] = useState(filters.customerId)
  const page = useLoad(
    () =>
      api.listOrders({
        limit: PAGE_SIZE,
        after,
        order: filters.order === 'asc' ? 'asc' : 'desc',
        status: filters.status || undefined,
        keyId: filters.keyId || undefined,
        customerId: filters.customerId || undefined,
      }),
    [filters.status, filters.keyId, filters.customerId, filters.order, after],
  )
  const customers = useCustomers(page.value?.data.map((order) => order.customerId) ?? [])
  const go = (changes: Record<string, string | undefined>, resetPaging = true) => {
    if (resetPaging) setPrevious([])
    navigate(href.orders({ ...filters, after: resetPaging ? undefined : after, ...changes }))
  }
  return (
    <main>
      <header class="page-head">
        <h1>Orders</h1>
      </header>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault()
          go({ keyId: keyId.trim() || undefined, customerId: customerId.trim() || undefined })
        }}
      >
        <Field label="Status">
          <select name="status" value={filters.status} onChange={(e) => go({ status: e.currentTarget.value || undefined })}>
            <option value="">any</option>
            {ORDER_STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </Field>
        <Field label="Placed with key id">
          <input type="search" name="keyId" value={keyId} placeholder="key_…" onInput={(e) => setKeyId(e.currentTarget.value)} />
        </Field>
        <Field label="Customer id">
          <input
            type="search"
            name="customerId"
            value={customerId}
            placeholder="cus_…"
            onInput={(e) => setCustomerId(e.currentTarget.value)}
          />
        </Field>
        <Field label="Order">
          <select name="order" value={filters.order} onChange={(e) => go({ order: e.currentTarget.value || undefined })}>
            <option value="">newest first</option>
            <option value="asc">oldest first</option>
          </select>
        </Field>
        <button type="submit">Search</button>
      </form>
      <ErrorNote message={page.error} />
      {page.value && <OrderTable orders={page.value.data} customers={customers.value} onChanged={page.reload} />}
      {page.value && page.value.data.length === 0 && <p class="empty">No order matches these filters.</p>}
      <nav class="pager">
        <button
          type="button"
          disabled={previous.length === 0}
          onClick={() => {
            const before = previous.slice(0, -1)
            const target = previous.at(-1)
            setPrevious(before)
            navigate(href.orders({ ...filters, after: target }))
          }}
        >
          Previous
        </button>
        <button
          type="button"
          disabled={!page.value?.nextAfter}
          onClick={() => {
            setPrevious([...previous, after])
            go({ after: page.value?.nextAfter ?? undefined }, false)
          }}
        >
          Next
        </button>
      </nav>
    </main>
  )
}

function OrderTable({ orders, customers, onChanged }: { orders: AdminOrder[]; customers: Customers | undefined; onChanged: () => void }) {
  const mayChange = useMayChange()
  if (orders.length === 0) return null
  return (
    <table class="orders">
      <thead>
        <tr>
          <th>Order</th>
          <th>Animal</th>
          <th>Status</th>
          <th>Key</th>
          <th>Customer</th>
          <th>Created</th>
          <th>Ended</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {orders.map((order) => (
          <tr data-order-id={order.id}>
            <td>{order.id}</td>
            <td>{order.petId}</td>
            <td>
              <span class={`state state-${order.status}`}>{order.status}</span>
            </td>
            <td data-column="key">
              <a href={href.key(order.keyId)}>{order.keyName ?? order.keyId}</a> <code class="prefix">{order.keyId}</code>
            </td>
            <td data-column="customer">
              <CustomerLink id={order.customerId} customers={customers} />
            </td>
            <td>{time(order.createdAt)}</td>
            {/* The status says why it ended (cancelled, completed, expired). */}
            <td>{order.endedAt === null ? `holds until ${time(order.expiresAt)}` : `${order.status} ${time(order.endedAt)}`}</td>
            <td>
              {order.status === 'placed' && mayChange && (
                <Confirm
                  label="Cancel…"
                  danger
                  question={`Cancel order ${order.id} (animal ${order.petId}, placed with ${order.keyName ?? order.keyId}, ${order.keyId})? The animal is available again. This cannot be undone.`}
                  confirmLabel="Cancel order"
                  onConfirm={async () => {
                    await api.cancelOrder(order.id)
                    onChanged()
                  }}
                />
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
