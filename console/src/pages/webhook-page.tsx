import { useState } from 'preact/hooks'
import { Confirm, ErrorNote, Field, SecretOnce, useLoad } from '../components.js'
import { problem, time } from '../format.js'
import { href, navigate } from '../router.js'
import { useMayChange } from '../session.js'
import { EndpointState, EventChoice, EventTags } from '../webhook-parts.js'
import { DISABLED_WHY, type WebhookEndpoint, webhooksApi } from '../webhooks-api.js'
import { Deliveries } from './webhook-deliveries.js'

const DEFAULT_PREVIOUS_SECRET_S = 86_400
const MAX_PREVIOUS_SECRET_S = 604_800

/**
 * One endpoint: its settings and state; for an `admin` token, edit (URL, events, description),
 * disable or enable, rotate its secret (the new one shown here once), delete.
 */
export function WebhookPage({ id }: { id: string }) {
  const endpoint = useLoad(() => webhooksApi.get(id), [id])
  const mayChange = useMayChange()
  const [secret, setSecret] = useState<string>()
  const w = endpoint.value
  return (
    <main>
      <p class="crumbs">
        <a href={href.webhooks()}>Webhooks</a> / <code>{id}</code>
      </p>
      <ErrorNote message={endpoint.error} />
      {secret !== undefined && <SecretOnce what="signing secret" secret={secret} onDone={() => setSecret(undefined)} />}
      {w && (
        <>
          <header class="page-head" data-endpoint-id={w.id}>
            <h1>{w.url}</h1>
            <EndpointState endpoint={w} />
            <button type="button" onClick={endpoint.reload}>
              Refresh
            </button>
          </header>
          <EndpointDetails endpoint={w} />
          {mayChange ? (
            <EndpointActions key={w.id} endpoint={w} onChanged={endpoint.reload} onSecret={setSecret} />
          ) : (
            <p class="hint read-only">Signed in with a read token: this endpoint can be viewed, not changed.</p>
          )}
          <Deliveries endpointId={w.id} />
        </>
      )}
    </main>
  )
}

function EndpointDetails({ endpoint: w }: { endpoint: WebhookEndpoint }) {
  return (
    <section>
      <h2>Endpoint</h2>
      <dl class="details">
        <dt>Id</dt>
        <dd>
          <code>{w.id}</code>
        </dd>
        <dt>URL</dt>
        <dd>
          <code>{w.url}</code>
        </dd>
        <dt>Events</dt>
        <dd>
          <EventTags events={w.events} />
        </dd>
        <dt>Customer</dt>
        <dd>{w.customerId === null ? 'every customer' : <a href={href.customer(w.customerId)}>{w.customerId}</a>}</dd>
        <dt>State</dt>
        <dd>{w.enabled ? 'enabled' : w.disabledReason === null ? 'disabled' : DISABLED_WHY[w.disabledReason]}</dd>
        <dt>Failing since</dt>
        <dd>{time(w.failingSince)}</dd>
        <dt>Secret</dt>
        <dd>
          shown only when made (create, rotate)
          {w.previousSecretExpiresAt !== null && <>; the previous one signs beside it until {time(w.previousSecretExpiresAt)}</>}
        </dd>
        <dt>Description</dt>
        <dd>{w.description ?? '—'}</dd>
        <dt>Created</dt>
        <dd>{time(w.createdAt)}</dd>
        <dt>Updated</dt>
        <dd>{time(w.updatedAt)}</dd>
      </dl>
    </section>
  )
}

function EndpointActions({
  endpoint: w,
  onChanged,
  onSecret,
}: {
  endpoint: WebhookEndpoint
  onChanged: () => void
  onSecret: (secret: string) => void
}) {
  const [expiresIn, setExpiresIn] = useState(String(DEFAULT_PREVIOUS_SECRET_S))
  // Here rather than in the form, which starts afresh from each version of the endpoint it edits.
  const [saved, setSaved] = useState(false)
  return (
    <section class="actions">
      <h2>Actions</h2>
      <EditEndpoint key={w.updatedAt} endpoint={w} onChanged={onChanged} saved={saved} onSaved={setSaved} />
      <div class="action-row">
        {w.enabled ? (
          <Confirm
            label="Disable…"
            question={`Disable ${w.url}? No event is sent to it until it is enabled again.`}
            confirmLabel="Disable"
            onConfirm={async () => {
              await webhooksApi.update(w.id, { enabled: false })
              setSaved(false)
              onChanged()
            }}
          />
        ) : (
          <Confirm
            label="Enable…"
            question={`Enable ${w.url} again? It starts afresh: why it was disabled, and since when it failed, are cleared.`}
            confirmLabel="Enable"
            onConfirm={async () => {
              await webhooksApi.update(w.id, { enabled: true })
              setSaved(false)
              onChanged()
            }}
          />
        )}
        <Confirm
          label="Rotate secret…"
          question="Make a new signing secret? It is shown once, here. The current one keeps signing beside it (both signatures on every delivery) for the time below, so the receiver can switch without failing a delivery."
          confirmLabel="Rotate"
          onConfirm={async () => {
            const seconds = Number(expiresIn)
            if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_PREVIOUS_SECRET_S)
              throw new Error(`The time is a whole number of seconds from 0 to ${MAX_PREVIOUS_SECRET_S} (7 days).`)
            const rotated = await webhooksApi.rotateSecret(w.id, seconds)
            onSecret(rotated.secret)
            setSaved(false)
            onChanged()
          }}
        >
          <Field label="The current secret keeps signing for (seconds; 0: it stops now)">
            <input
              type="number"
              name="expiresInSeconds"
              min={0}
              max={MAX_PREVIOUS_SECRET_S}
              value={expiresIn}
              onInput={(e) => setExpiresIn(e.currentTarget.value)}
            />
          </Field>
        </Confirm>
        <Confirm
          label="Delete…"
          danger
          question={`Delete ${w.url}? No more events are sent to it, and its secret is gone. This cannot be undone (to pause it, disable it).`}
          confirmLabel="Delete"
          onConfirm={async () => {
            await webhooksApi.remove(w.id)
            navigate(href.webhooks())
          }}
        />
      </div>
    </section>
  )
}

/** URL, events and description; only what differs from the endpoint is sent. */
function EditEndpoint({
  endpoint: w,
  onChanged,
  saved,
  onSaved: setSaved,
}: {
  endpoint: WebhookEndpoint
  onChanged: () => void
  saved: boolean
  onSaved: (saved: boolean) => void
}) {
  const [form, setForm] = useState({ url: w.url, description: w.description ?? '' })
  const [events, setEvents] = useState<string[]>(w.events)
  const [error, setError] = useState<string>()
  const changes: Record<string, unknown> = {}
  if (form.url.trim() !== w.url) changes.url = form.url.trim()
  if (events.join(' ') !== w.events.join(' ') && events.length > 0) changes.events = events
  const description = form.description.trim() === '' ? null : form.description
  if (description !== w.description) changes.description = description
  const set = (field: keyof typeof form) => (e: { currentTarget: HTMLInputElement }) => {
    setSaved(false)
    setForm({ ...form, [field]: e.currentTarget.value })
  }
  return (
    <form
      class="edit"
      aria-label="Edit the endpoint"
      onSubmit={async (e) => {
        e.preventDefault()
        setError(undefined)
        setSaved(false)
        try {
          await webhooksApi.update(w.id, changes)
          setSaved(true)
          onChanged()
        } catch (err) {
          setError(problem(err))
        }
      }}
    >
      <Field label="URL (https)">
        <input name="url" size={48} value={form.url} onInput={set('url')} />
      </Field>
      <Field label="Description (empty: none)">
        <input name="description" value={form.description} onInput={set('description')} />
      </Field>
      <EventChoice
        events={events}
        onChange={(chosen) => {
          setSaved(false)
          setEvents(chosen)
        }}
      />
      <button type="submit" disabled={Object.keys(changes).length === 0}>
        Save changes
      </button>
      {saved && <p class="ok">Saved.</p>}
      <ErrorNote message={error} />
    </form>
  )
}
