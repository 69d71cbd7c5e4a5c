import { useState } from 'preact/hooks'
import { PLANS } from '../api.js'
import { ErrorNote, Field, useLoad } from '../components.js'
import { sharedBy, sharedByText, useCustomerKeys } from '../customer-links.js'
import { CUSTOMER_KEYS_SHOWN, customersApi } from '../customers-api.js'
import { count, time } from '../format.js'
import { StateBadge } from '../key-state.js'
import { href, navigate } from '../router.js'
import { useMayChange } from '../session.js'
import { EditCustomer } from './customer-form.js'
import { UsageChart } from './usage-chart.js'

const PAGE_SIZE = 20

/** The customers: plan and name filters (kept in the address), paged by the API's cursor. */
export function CustomerList({ query }: { query: URLSearchParams }) {
  const filters = { plan: query.get('plan') ?? '', name: query.get('name') ?? '' }
  const after = query.get('after') ?? undefined
  const [name, setName] = useState(filters.name)
  const page = useLoad(
    () => customersApi.list({ limit: PAGE_SIZE, after, plan: filters.plan || undefined, name: filters.name || undefined }),
    [filters.plan, filters.name, after],
  )
  const go = (changes: Record<string, string | undefined>) => navigate(href.customers({ ...filters, ...changes }))
  return (
    <main>
      <header class="page-head">
        <h1>Customers</h1>
      </header>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault()
          go({ name: name.trim() || undefined })
        }}
      >
        <Field label="Plan">
          <select name="plan" value={filters.plan} onChange={(e) => go({ plan: e.currentTarget.value || undefined })}>
            <option value="">any</option>
            {PLANS.map((p) => (
              <option value={p}>{p}</option>
            ))}
          </select>
        </Field>
        <Field label="Name contains">
          <input type="search" name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <button type="submit">Search</button>
      </form>
      <ErrorNote message={page.error} />
      {page.value && page.value.data.length > 0 && (
        <table class="customers">
          <thead>
            <tr>
              <th>Name</th>
              <th>Id</th>
              <th>Plan</th>
              <th class="num">Per minute</th>
              <th class="num">Per day</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {page.value.data.map((c) => (
              <tr>
                <td>
                  <a href={href.customer(c.id)}>{c.name}</a>
                </td>
                <td>
                  <code>{c.id}</code>
                </td>
                <td>{c.plan}</td>
                <td class="num">{count(c.perMinute)}</td>
                <td class="num">{count(c.perDay)}</td>
                <td>{time(c.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page.value && page.value.data.length === 0 && <p class="empty">No customer matches these filters.</p>}
      <nav class="pager">
        <button type="button" disabled={!page.value?.nextAfter} onClick={() => go({ after: page.value?.nextAfter ?? undefined })}>
          Next
        </button>
      </nav>
    </main>
  )
}

/**
 * One customer: its plan and limits (one quota for all its keys, how many said), its metadata, its
 * keys, its orders (a link), its usage chart (the sum of its keys'), and, for an admin token, the
 * form that changes it.
 */
export function CustomerPage({ id }: { id: string }) {
  const mayChange = useMayChange()
  const customer = useLoad(() => customersApi.get(id), [id])
  const keys = useCustomerKeys(id)
  const c = customer.value?.id === id ? customer.value : undefined
  const reload = () => {
    customer.reload()
    keys.reload()
  }
  return (
    <main>
      <p class="crumbs">
        <a href={href.customers()}>Customers</a> / <code>{id}</code>
      </p>
      <header class="page-head" data-customer-id={id}>
        <h1>{c ? c.name : id}</h1>
        <a class="button" href={href.orders({ customerId: id })}>
          Its orders
        </a>
      </header>
      <ErrorNote message={customer.error ?? keys.error} />
      {c && (
        <dl class="details">
          <dt>Id</dt>
          <dd>
            <code>{c.id}</code>
          </dd>
          <dt>Plan</dt>
          <dd data-field="plan">{c.plan}</dd>
          <dt>Limits</dt>
          <dd data-field="limits">
            {count(c.perMinute)} / minute, {count(c.perDay)} / day
          </dd>
          <dt>Quota</dt>
          <dd data-field="quota" data-shared-by={keys.value ? sharedBy(keys.value).count : undefined}>
            one quota (windows and ban) shared by {keys.value ? sharedByText(keys.value) : 'its keys'}
          </dd>
          <dt>Created</dt>
          <dd>{time(c.createdAt)}</dd>
          <dt>Updated</dt>
          <dd>{time(c.updatedAt)}</dd>
          <dt>Metadata</dt>
          <dd data-field="metadata">{c.metadata === null ? '—' : <code>{JSON.stringify(c.metadata)}</code>}</dd>
        </dl>
      )}
      <section class="customer-keys">
        <h2>Keys</h2>
        {keys.value && keys.value.data.length === 0 && <p class="empty">No key yet: create one with this customer's id.</p>}
        {keys.value && keys.value.data.length > 0 && (
          <table class="customer-keys">
            <thead>
              <tr>
                <th>Name</th>
                <th>Prefix</th>
                <th>State</th>
                <th>Created</th>
                <th>Last used</th>
                <th>Key id</th>
              </tr>
            </thead>
            <tbody>
              {keys.value.data.map((k) => (
                <tr data-key-id={k.id}>
                  <td>
                    <a href={href.key(k.id)}>{k.name}</a>
                  </td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>
                    <StateBadge apiKey={k} />
                  </td>
                  <td>{time(k.createdAt)}</td>
                  <td>{time(k.lastUsedAt, 'never')}</td>
                  <td>
                    <code>{k.id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {keys.value?.nextAfter && (
          <p class="hint">
            The first {CUSTOMER_KEYS_SHOWN}: <a href={href.keys()}>the keys list</a> has them all.
          </p>
        )}
      </section>
      <UsageChart
        keyId={id}
        rotated={false}
        history={(query) => customersApi.usageHistory(id, query)}
        title="Usage over time (all its keys)"
      />
      {c &&
        (mayChange ? (
          <section class="actions">
            <h2>Change the customer</h2>
            <EditCustomer key={c.id} customer={c} keys={keys.value ? sharedByText(keys.value) : 'its keys'} onChanged={reload} />
          </section>
        ) : (
          <p class="hint read-only">Signed in with a read token: this customer can be viewed, not changed.</p>
        ))}
    </main>
  )
}
