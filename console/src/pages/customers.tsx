import { useState } from 'preact/hooks'
import { PLANS } from '../api.js'
import { ErrorNote, Field, useLoad } from '../components.js'
import { customersApi } from '../customers-api.js'
import { count, time } from '../format.js'
import { href, navigate } from '../router.js'
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

/** One customer: its plan (shared by its keys), its keys, and its usage chart (the sum of its keys'). */
export function CustomerPage({ id }: { id: string }) {
  const customer = useLoad(() => customersApi.get(id), [id])
  const keys = useLoad(() => customersApi.keys(id), [id])
  const c = customer.value
  return (
    <main>
      <header class="page-head">
        <h1>{c ? c.name : id}</h1>
      </header>
      <ErrorNote message={customer.error} />
      {c && (
        <dl class="details">
          <dt>Id</dt>
          <dd>
            <code>{c.id}</code>
          </dd>
          <dt>Plan</dt>
          <dd>
            {c.plan}: {count(c.perMinute)}/min, {count(c.perDay)}/day, one quota for all its keys
          </dd>
          <dt>Created</dt>
          <dd>{time(c.createdAt)}</dd>
          <dt>Metadata</dt>
          <dd>{c.metadata === null ? '—' : <code>{JSON.stringify(c.metadata)}</code>}</dd>
        </dl>
      )}
      <section>
        <h2>Keys</h2>
        <ErrorNote message={keys.error} />
        {keys.value && keys.value.data.length === 0 && <p class="empty">No key yet: create one with this customer's id.</p>}
        {keys.value && keys.value.data.length > 0 && (
          <table class="customer-keys">
            <thead>
              <tr>
                <th>Name</th>
                <th>Prefix</th>
                <th>State</th>
                <th>Last used</th>
              </tr>
            </thead>
            <tbody>
              {keys.value.data.map((k) => (
                <tr>
                  <td>
                    <a href={href.key(k.id)}>{k.name}</a>
                  </td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.state}</td>
                  <td>{time(k.lastUsedAt, 'never')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <UsageChart keyId={id} rotated={false} history={(query) => customersApi.usageHistory(id, query)} />
    </main>
  )
}
