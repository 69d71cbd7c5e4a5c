import { Fragment } from 'preact'
import { useState } from 'preact/hooks'
import { ErrorNote, useLoad } from '../components.js'
import { problem, time } from '../format.js'
import { useMayChange } from '../session.js'
import { type WebhookDelivery, webhooksApi } from '../webhooks-api.js'

const PAGE = 20

/** `YYYY-MM-DD HH:MM` in UTC (or with a `T`) -> RFC 3339; throws, naming the form, for anything else. */
function sinceInput(value: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})$/.exec(value.trim())
  const ms = m === null ? Number.NaN : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]))
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 16) !== `${m![1]}-${m![2]}-${m![3]}T${m![4]}:${m![5]}`)
    throw new Error(`Since is a date and time in UTC written YYYY-MM-DD HH:MM, e.g. 2026-11-28 00:00 (got “${value.trim()}”).`)
  return new Date(ms).toISOString()
}

const statusText = (d: WebhookDelivery) => (d.status === 'pending' ? `pending: next ${time(d.nextAttemptAt)}` : d.status)
const lastText = (d: WebhookDelivery) =>
  d.lastError ?? (d.lastStatusCode === null ? '—' : `${d.lastStatusCode}${d.lastDurationMs === null ? '' : ` in ${d.lastDurationMs} ms`}`)

/**
 * The endpoint's delivery log: each event sent to it, newest first (its status, attempts, the last
 * answer or error, the next attempt), each one's attempts on demand; for an `admin` token, a retry
 * of one delivery and a replay of everything since a time.
 */
export function Deliveries({ endpointId }: { endpointId: string }) {
  const [pages, setPages] = useState<Array<number | undefined>>([undefined])
  const after = pages[pages.length - 1]
  const page = useLoad(() => webhooksApi.deliveries(endpointId, { limit: PAGE, after }), [endpointId, after])
  const mayChange = useMayChange()
  const [open, setOpen] = useState<string>()
  const [note, setNote] = useState<string>()
  const [error, setError] = useState<string>()
  const retry = async (d: WebhookDelivery) => {
    setError(undefined)
    try {
      await webhooksApi.retry(endpointId, d.id)
      setNote(`Delivery of ${d.eventId} is due now.`)
      page.reload()
    } catch (e) {
      setError(problem(e))
    }
  }
  const rows = page.value?.data ?? []
  return (
    <section class="deliveries">
      <h2>Deliveries</h2>
      <button type="button" onClick={page.reload}>
        Refresh
      </button>
      <ErrorNote message={page.error ?? error} />
      {note !== undefined && <p class="ok">{note}</p>}
      {page.value && rows.length === 0 && <p class="hint">No deliveries yet.</p>}
      {rows.length > 0 && (
        <table class="deliveries">
          <thead>
            <tr>
              <th>Event</th>
              <th>Status</th>
              <th>Attempts</th>
              <th>Last</th>
              <th>Created</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <Fragment key={d.id}>
                <tr data-delivery-id={d.id} data-status={d.status}>
                  <td>
                    {d.eventType} <code>{d.eventId}</code>
                  </td>
                  <td>{statusText(d)}</td>
                  <td>{d.attempts}</td>
                  <td>{lastText(d)}</td>
                  <td>{time(d.createdAt)}</td>
                  <td>
                    <button type="button" onClick={() => setOpen(open === d.id ? undefined : d.id)}>
                      {open === d.id ? 'Hide attempts' : 'Attempts'}
                    </button>
                    {mayChange && (
                      <button type="button" onClick={() => void retry(d)}>
                        Retry now
                      </button>
                    )}
                  </td>
                </tr>
                {open === d.id && (
                  <tr>
                    <td colSpan={6}>
                      <Attempts endpointId={endpointId} deliveryId={d.id} />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      )}
      <p class="pager">
        {pages.length > 1 && (
          <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
            Newer
          </button>
        )}
        {page.value?.nextAfter != null && (
          <button type="button" onClick={() => setPages([...pages, page.value!.nextAfter!])}>
            Older
          </button>
        )}
      </p>
      {mayChange && (
        <Replay
          endpointId={endpointId}
          onReplayed={(n) => {
            setNote(`${n} deliveries are due now.`)
            page.reload()
          }}
        />
      )}
    </section>
  )
}

function Attempts({ endpointId, deliveryId }: { endpointId: string; deliveryId: string }) {
  const detail = useLoad(() => webhooksApi.delivery(endpointId, deliveryId), [endpointId, deliveryId])
  const attempts = detail.value?.attemptLog ?? []
  return (
    <div class="attempts" data-attempts-of={deliveryId}>
      <ErrorNote message={detail.error} />
      {detail.value && attempts.length === 0 && <p class="hint">No attempt yet.</p>}
      {attempts.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>#</th>
              <th>Started</th>
              <th>Duration</th>
              <th>Status</th>
              <th>Error</th>
              <th>Answer</th>
            </tr>
          </thead>
          <tbody>
            {attempts.map((a) => (
              <tr key={a.attempt} data-attempt={a.attempt}>
                <td>{a.attempt}</td>
                <td>{time(a.startedAt)}</td>
                <td>{a.durationMs === null ? '—' : `${a.durationMs} ms`}</td>
                <td>{a.statusCode ?? '—'}</td>
                <td>{a.error ?? '—'}</td>
                <td>{a.responseExcerpt === null ? '—' : <code>{a.responseExcerpt}</code>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

function Replay({ endpointId, onReplayed }: { endpointId: string; onReplayed: (enqueued: number) => void }) {
  const [since, setSince] = useState('')
  const [error, setError] = useState<string>()
  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    try {
      const { enqueued } = await webhooksApi.replay(endpointId, sinceInput(since))
      onReplayed(enqueued)
    } catch (e) {
      setError(problem(e))
    }
  }
  return (
    <form class="replay" onSubmit={(e) => void submit(e)}>
      <h3>Replay</h3>
      <p class="hint">Sends this endpoint every event it receives since a time again (still in the event log).</p>
      <label>
        Since (UTC, YYYY-MM-DD HH:MM)
        <input name="since" value={since} onInput={(e) => setSince((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit" disabled={since.trim() === ''}>
        Replay
      </button>
      <ErrorNote message={error} />
    </form>
  )
}
