import { useState } from 'preact/hooks'
import { type AdminKey, api, PLANS, type Plan } from '../api.js'
import { Confirm, ErrorNote, Field } from '../components.js'
import { fromDateTimeInput, problem, toDateTimeInput } from '../format.js'
import { href, navigate } from '../router.js'

const DEFAULT_GRACE_S = 86_400
const MAX_GRACE_S = 604_800

/** Update (plan, limits, expiry, name), rotate with a grace period, revoke: each after a confirmation. */
export function KeyActions({
  apiKey,
  onChanged,
  onSecret,
}: {
  apiKey: AdminKey
  onChanged: () => void
  onSecret: (secret: string) => void
}) {
  const [grace, setGrace] = useState(String(DEFAULT_GRACE_S))
  const changeable = apiKey.state !== 'revoked' && apiKey.rotatedTo === null
  return (
    <section class="actions">
      <h2>Actions</h2>
      {!changeable && (
        <p class="hint">{apiKey.state === 'revoked' ? 'A revoked key cannot change.' : 'This key was rotated: change its successor.'}</p>
      )}
      {changeable && <EditKey key={`${apiKey.id} ${apiKey.updatedAt}`} apiKey={apiKey} onChanged={onChanged} />}
      <div class="action-row">
        {changeable && apiKey.state === 'active' && (
          <Confirm
            label="Rotate…"
            question={`Rotate ${apiKey.name} (${apiKey.id})? A new key with the same plan, limits and quota is issued; this one keeps working for the grace period, then stops.`}
            confirmLabel="Rotate"
            onConfirm={async () => {
              const seconds = Number(grace)
              if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_GRACE_S)
                throw new Error(`The grace period is a whole number of seconds from 0 to ${MAX_GRACE_S} (7 days).`)
              const rotated = await api.rotateKey(apiKey.id, seconds)
              onSecret(rotated.key)
              navigate(href.key(rotated.apiKey.id))
            }}
          >
            <Field label="Grace period (seconds; 0 stops the old key at once)">
              <input type="number" name="grace" min={0} max={MAX_GRACE_S} value={grace} onInput={(e) => setGrace(e.currentTarget.value)} />
            </Field>
          </Confirm>
        )}
        {apiKey.state !== 'revoked' && (
          <Confirm
            label="Revoke…"
            danger
            question={`Revoke ${apiKey.name} (${apiKey.id})? The keys of its rotation chain still in their grace period are revoked with it. Every instance refuses them within 2 seconds. This cannot be undone.`}
            confirmLabel="Revoke"
            onConfirm={async () => {
              await api.revokeKey(apiKey.id)
              onChanged()
            }}
          />
        )}
      </div>
    </section>
  )
}

/** The fields an update can change; only those that differ from the key are sent. */
function EditKey({ apiKey, onChanged }: { apiKey: AdminKey; onChanged: () => void }) {
  const initial = () => ({
    name: apiKey.name,
    plan: apiKey.plan,
    perMinute: String(apiKey.perMinute),
    perDay: String(apiKey.perDay),
    expiresAt: toDateTimeInput(apiKey.expiresAt),
  })
  const [form, setForm] = useState(initial)
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState<string>()
  const [saved, setSaved] = useState(false)

  const changes = (): Record<string, unknown> => {
    const body: Record<string, unknown> = {}
    if (form.name !== apiKey.name) body.name = form.name
    if (form.plan !== apiKey.plan) body.plan = form.plan
    if (form.plan === 'enterprise') {
      if (form.plan !== apiKey.plan || Number(form.perMinute) !== apiKey.perMinute) body.perMinute = Number(form.perMinute)
      if (form.plan !== apiKey.plan || Number(form.perDay) !== apiKey.perDay) body.perDay = Number(form.perDay)
    }
    const expiresAt = fromDateTimeInput(form.expiresAt)
    if (toDateTimeInput(expiresAt) !== toDateTimeInput(apiKey.expiresAt)) body.expiresAt = expiresAt
    return body
  }
  const pending = changes()
  const set = (field: keyof ReturnType<typeof initial>) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) => {
    setSaved(false)
    setForm({ ...form, [field]: e.currentTarget.value })
  }
  const save = async () => {
    setError(undefined)
    try {
      await api.updateKey(apiKey.id, pending)
      setConfirming(false)
      setSaved(true)
      onChanged()
    } catch (e) {
      setError(problem(e))
    }
  }
  return (
    <form
      class="edit"
      onSubmit={(e) => {
        e.preventDefault()
        if (Object.keys(pending).length > 0) setConfirming(true)
      }}
    >
      <Field label="Name">
        <input name="name" value={form.name} onInput={set('name')} />
      </Field>
      <Field label="Plan">
        <select name="plan" value={form.plan} onChange={set('plan')}>
          {PLANS.map((p: Plan) => (
            <option value={p}>{p}</option>
          ))}
        </select>
      </Field>
      <Field label="Per minute">
        <input
          type="number"
          name="perMinute"
          min={1}
          value={form.perMinute}
          disabled={form.plan !== 'enterprise'}
          onInput={set('perMinute')}
        />
      </Field>
      <Field label="Per day">
        <input type="number" name="perDay" min={1} value={form.perDay} disabled={form.plan !== 'enterprise'} onInput={set('perDay')} />
      </Field>
      <Field label="Expires (UTC; empty: never)">
        <input type="datetime-local" name="expiresAt" value={form.expiresAt} onInput={set('expiresAt')} />
      </Field>
      {!confirming && (
        <button type="submit" disabled={Object.keys(pending).length === 0}>
          Save changes…
        </button>
      )}
      {confirming && (
        <div class="confirm" role="dialog" aria-label="Save changes">
          <p>
            Change {Object.keys(pending).join(', ')} of {apiKey.id}? Every instance applies it within 2 seconds.
          </p>
          <code class="diff">{JSON.stringify(pending)}</code>
          <button type="button" class="primary" onClick={save}>
            Save
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      )}
      {saved && <p class="ok">Saved.</p>}
      <ErrorNote message={error} />
    </form>
  )
}
