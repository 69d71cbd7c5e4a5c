import { useState } from 'preact/hooks'
import { type AdminKey, api, PLANS, STATES } from '../api.js'
import { ErrorNote, Field, useLoad } from '../components.js'
import { CustomerLink, type Customers, useCustomers } from '../customer-links.js'
import { count, time } from '../format.js'
import { StateBadge } from '../key-state.js'
import { href, navigate } from '../router.js'
import { ScopeBadge } from '../scope-choice.js'
import { useMayChange } from '../session.js'
import { FindKey } from './find-key.js'
import { TopKeys } from './top-keys.js'

const PAGE_SIZE = 20

/** The keys list, newest first (the API's order): name search, plan and state filters (kept in the address), paged by the API's cursor. */
export function KeyList({ query }: { query: URLSearchParams }) {
  const mayChange = useMayChange()
  const filters = { name: query.get('name') ?? '', plan: query.get('plan') ?? '', state: query.get('state') ?? '' }
  const after = query.get('after') ?? undefined
  // The cursors of the pages before this one, for Previous (the API pages forward only).
  const [previous, setPrevious] = useState<Array<string | undefined>>([])
  const [search, setSearch] = useState(filters.name)
  const page = useLoad(
    () =>
      api.listKeys({
        limit: PAGE_SIZE,
        after,
        name: filters.name || undefined,
        plan: filters.plan || undefined,
        state: filters.state || undefined,
      }),
    [filters.name, filters.plan, filters.state, after],
  )
  const customers = useCustomers(page.value?.data.map((k) => k.customerId) ?? [])
  const go = (changes: Record<string, string | undefined>, resetPaging = true) => {
    if (resetPaging) setPrevious([])
    navigate(href.keys({ ...filters, after: resetPaging ? undefined : after, ...changes }))
  }
  return (
    <main>
      <header class="page-head">
        <h1>Keys</h1>
        {mayChange && (
          <a class="button primary" href={href.newKey()}>
            Create key
          </a>
        )}
      </header>
      <FindKey />
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault()
          go({ name: search.trim() || undefined })
        }}
      >
        <Field label="Name contains">
          <input type="search" name="name" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </Field>
        <Field label="Plan">
          <select name="plan" value={filters.plan} onChange={(e) => go({ plan: e.currentTarget.value || undefined })}>
            <option value="">any</option>
            {PLANS.map((p) => (
              <option value={p}>{p}</option>
            ))}
          </select>
        </Field>
        <Field label="State">
          <select name="state" value={filters.state} onChange={(e) => go({ state: e.currentTarget.value || undefined })}>
            <option value="">any</option>
            {STATES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </Field>
        <button type="submit">Search</button>
      </form>
      <ErrorNote message={page.error} />
      {page.value && <KeyTable keys={page.value.data} customers={customers.value} />}
      {page.value && page.value.data.length === 0 && <p class="empty">No key matches these filters.</p>}
      <nav class="pager">
        <button
          type="button"
          disabled={previous.length === 0}
          onClick={() => {
            const before = previous.slice(0, -1)
            const target = previous.at(-1)
            setPrevious(before)
            navigate(href.keys({ ...filters, after: target }))
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
      <TopKeys />
    </main>
  )
}

function KeyTable({ keys, customers }: { keys: AdminKey[]; customers: Customers | undefined }) {
  if (keys.length === 0) return null
  // The name with the display prefix under it: two keys of one name are told apart at a glance.
  return (
    <table class="keys">
      <thead>
        <tr>
          <th>Name</th>
          <th>Customer</th>
          <th>Plan</th>
          <th class="num">Per minute</th>
          <th class="num">Per day</th>
          <th>State</th>
          <th>Created</th>
          <th>Expires</th>
          <th>Last used</th>
          <th>Key id</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <tr data-key-id={key.id}>
            <td>
              <a href={href.key(key.id)}>{key.name}</a> <code class="prefix">{key.prefix}…</code> <ScopeBadge scopes={key.scopes} />
            </td>
            <td data-column="customer">
              <CustomerLink id={key.customerId} customers={customers} />
            </td>
            <td>{key.plan}</td>
            <td class="num">{count(key.perMinute)}</td>
            <td class="num">{count(key.perDay)}</td>
            <td data-column="state">
              <StateBadge apiKey={key} />
            </td>
            <td data-column="created">{time(key.createdAt)}</td>
            <td data-column="expires">{time(key.expiresAt, 'never')}</td>
            <td>{time(key.lastUsedAt, 'never')}</td>
            <td>
              <code>{key.id}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
