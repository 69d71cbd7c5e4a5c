import { ErrorNote } from './components.js'
import { time } from './format.js'
import { DISABLED_WHY, EVENT_TYPES, EVERY_EVENT, type WebhookEndpoint } from './webhooks-api.js'

/** The events an endpoint receives, as tags; `*` as "every event". */
export function EventTags({ events }: { events: string[] }) {
  if (events.includes(EVERY_EVENT)) return <span class="scope-tag">every event</span>
  return (
    <>
      {events.map((type) => (
        <span class="scope-tag">{type}</span>
      ))}
    </>
  )
}

export function EndpointState({ endpoint: w }: { endpoint: WebhookEndpoint }) {
  if (!w.enabled)
    return (
      <span
        class="state state-revoked"
        data-state="disabled"
        title={w.disabledReason === null ? undefined : DISABLED_WHY[w.disabledReason]}
      >
        disabled ({w.disabledReason})
      </span>
    )
  if (w.failingSince !== null)
    return (
      <span class="state state-expiring" data-state="failing">
        failing since {time(w.failingSince)}
      </span>
    )
  return (
    <span class="state state-active" data-state="enabled">
      enabled
    </span>
  )
}

/** One checkbox per event type, and one for every type (`*`, those added later too), which stands alone. */
export function EventChoice({ events, onChange }: { events: string[]; onChange: (events: string[]) => void }) {
  const every = events.includes(EVERY_EVENT)
  return (
    <fieldset class="scope-choice event-choice">
      <legend>Events</legend>
      <label>
        <input type="checkbox" name="every" checked={every} onChange={(e) => onChange(e.currentTarget.checked ? [EVERY_EVENT] : [])} />{' '}
        <strong>every event type</strong> <span class="hint">those added later too</span>
      </label>
      {EVENT_TYPES.map((type) => (
        <label>
          <input
            type="checkbox"
            name="event"
            value={type}
            disabled={every}
            checked={every || events.includes(type)}
            onChange={(e) =>
              onChange(
                e.currentTarget.checked ? EVENT_TYPES.filter((t) => t === type || events.includes(t)) : events.filter((t) => t !== type),
              )
            }
          />{' '}
          <code>{type}</code>
        </label>
      ))}
      <ErrorNote message={events.length === 0 ? 'Choose at least one event type, or every type.' : undefined} />
    </fieldset>
  )
}
