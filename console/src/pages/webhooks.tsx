import { useState } from 'preact/hooks'
import { ErrorNote, Field, SecretOnce, useLoad } from '../components.js'
import { problem, time } from '../format.js'
import { href, navigate } from '../router.js'
import { useMayChange } from '../session.js'
import { EndpointState, EventChoice, EventTags } from '../webhook-parts.js'
import { type EndpointWithSecret, EVERY_EVENT, webhooksApi } from '../webhooks-api.js'

const PAGE_SIZE = 20

/**
 * Webhook endpoints: the list (URL, events, customer, state), and for an `admin` token a create
 * form whose answer shows the signing secret this once. Each endpoint has its own page.
 */
export function WebhookList({ query }: { query: URLSearchParams }) {
  const after = query.get('after') ?? undefined
  const state = query.get('state') ?? ''
  const page = useLoad(() => webhooksApi.list({ limit: PAGE_SIZE, after, state: state || undefined }), [after, state])
  const mayChange = useMayChange()
  return (
    <main>
      <header class="page-head">
        <h1>Webhooks</h1>
      </header>
      {mayChange && <CreateWebhook onCreated={page.reload} />}
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="State">
          <select name="state" value={state} onChange={(e) => navigate(href.webhooks({ state: e.currentTarget.value || undefined }))}>
            <option value="">any</option>
            <option value="enabled">enabled</option>
            <option value="disabled">disabled</option>
          </select>
        </Field>
      </form>
      <ErrorNote message={page.error} />
      {page.value && page.value.data.length > 0 && (
        <table class="webhooks">
          <thead>
            <tr>
              <th>URL</th>
              <th>Events</th>
              <th>Customer</th>
              <th>State</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {page.value.data.map((w) => (
              <tr data-endpoint-id={w.id}>
                <td>
                  <a href={href.webhook(w.id)}>{w.url}</a>
                  {w.description !== null && <div class="hint">{w.description}</div>}
                </td>
                <td>
                  <EventTags events={w.events} />
                </td>
                <td>{w.customerId === null ? 'every customer' : <a href={href.customer(w.customerId)}>{w.customerId}</a>}</td>
                <td>
                  <EndpointState endpoint={w} />
                </td>
                <td>{time(w.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page.value && page.value.data.length === 0 && <p class="empty">No webhook endpoint{state ? ` is ${state}` : ' yet'}.</p>}
      <nav class="pager">
        <button
          type="button"
          disabled={!page.value?.nextAfter}
          onClick={() => navigate(href.webhooks({ state: state || undefined, after: page.value?.nextAfter ?? undefined }))}
        >
          Next
        </button>
      </nav>
    </main>
  )
}

function CreateWebhook({ onCreated }: { onCreated: () => void }) {
  const [form, setForm] = useState({ url: '', customerId: '', description: '' })
  const [events, setEvents] = useState<string[]>([EVERY_EVENT])
  const [error, setError] = useState<string>()
  const [created, setCreated] = useState<EndpointWithSecret>()
  const set = (field: keyof typeof form) => (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [field]: e.currentTarget.value })
  if (created)
    return (
      <div>
        <SecretOnce
          what={`signing secret of ${created.endpoint.url}`}
          secret={created.secret}
          onDone={() => navigate(href.webhook(created.endpoint.id))}
        />
        <p class="hint">
          Give it to the receiver: it verifies every delivery with it (<code>new Webhook(secret)</code> of the standardwebhooks package).
        </p>
      </div>
    )
  return (
    <form
      class="edit"
      aria-label="Create a webhook endpoint"
      onSubmit={async (e) => {
        e.preventDefault()
        if (events.length === 0) return
        setError(undefined)
        try {
          const body: { url: string; events: string[]; customerId?: string; description?: string } = { url: form.url.trim(), events }
          if (form.customerId.trim() !== '') body.customerId = form.customerId.trim()
          if (form.description.trim() !== '') body.description = form.description
          setCreated(await webhooksApi.create(body))
          setForm({ url: '', customerId: '', description: '' })
          onCreated()
        } catch (err) {
          setError(problem(err))
        }
      }}
    >
      <Field label="URL (https)">
        <input name="url" required size={48} placeholder="https://hooks.example.com/animal-store" value={form.url} onInput={set('url')} />
      </Field>
      <Field label="Customer (empty: every customer)">
        <input name="customerId" placeholder="cus_…" value={form.customerId} onInput={set('customerId')} />
      </Field>
      <Field label="Description">
        <input name="description" value={form.description} onInput={set('description')} />
      </Field>
      <EventChoice events={events} onChange={setEvents} />
      <button type="submit" class="primary" disabled={events.length === 0}>
        Create endpoint
      </button>
      <ErrorNote message={error} />
    </form>
  )
}
