import { useState } from 'preact/hooks'
import { type AdminOrder, api, ORDER_STATUSES } from '../api.js'
import { Confirm, ErrorNote, Field, useLoad } from '../components.js'
import { time } from '../format.js'
import { href, navigate } from '../router.js'
import { useMayChange } from '../session.js'

const PAGE_SIZE = 20

/** Every caller's orders: status and key filters (kept in the address), paged by the API's cursor; Cancel on placed ones. */
export function OrderList({ query }: { query: URLSearchParams }) {
  const filters = { status: query.get('status') ?? '', keyId: query.get('keyId') ?? '' }
  const after = query.get('after') ?? undefined
  // The cursors of the pages before this one, for Previous (the API pages forward only).
  const [previous, setPrevious] = useState<Array<string | undefined>>([])
  const [keyId, setKeyId] = useState(filters.keyId)
  const page = useLoad(
    () => api.listOrders({ limit: PAGE_SIZE, after, status: filters.status || undefined, keyId: filters.keyId || undefined }),
    [filters.status, filters.keyId, after],
  )
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
          go({ keyId: keyId.trim() || undefined })
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
        <button type="submit">Search</button>
      </form>
      <ErrorNote message={page.error} />
      {page.value && <OrderTable orders={page.value.data} onChanged={page.reload} />}
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

function OrderTable({ orders, onChanged }: { orders: AdminOrder[]; onChanged: () => void }) {
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
            <td>
              <a href={href.key(order.keyId)}>
                <code>{order.keyId}</code>
              </a>
            </td>
            <td>{time(order.createdAt)}</td>
            {/* The status says why it ended (cancelled, completed, expired). */}
            <td>{order.endedAt === null ? `holds until ${time(order.expiresAt)}` : `${order.status} ${time(order.endedAt)}`}</td>
            <td>
              {order.status === 'placed' && mayChange && (
                <Confirm
                  label="Cancel…"
                  danger
                  question={`Cancel order ${order.id} (animal ${order.petId}, placed with ${order.keyId})? The animal is available again. This cannot be undone.`}
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
