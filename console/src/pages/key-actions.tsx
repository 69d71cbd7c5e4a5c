import { useState } from 'preact/hooks'
import { type AdminKey, api, PLANS, type Plan } from '../api.js'
import { Confirm, ErrorNote, Field } from '../components.js'
import type { AdminCustomer } from '../customers-api.js'
import { EXPIRY_LABEL, fromUtcInput, problem, time, toUtcInput } from '../format.js'
import { type Scope, scopesText } from '../key-scopes.js'
import { metadataText, parseMetadata } from '../metadata.js'
import { href, navigate } from '../router.js'
import { ScopeChoice } from '../scope-choice.js'
import { handOverSecret } from '../secret-handover.js'

const DEFAULT_GRACE_S = 86_400
const MAX_GRACE_S = 604_800

/**
 * Update (plan, limits, expiry, name, metadata, scopes), rotate with a grace period, revoke: each
 * after a confirmation. A key of a customer takes the customer's plan and limits: those are
 * changed on the customer's page (`customer`: the customer once read, null if it could not be).
 */
export function KeyActions({ apiKey, customer, onChanged }: { apiKey: AdminKey; customer?: AdminCustomer | null; onChanged: () => void }) {
  const [grace, setGrace] = useState(String(DEFAULT_GRACE_S))
  const changeable = apiKey.state !== 'revoked' && apiKey.rotatedTo === null
  return (
    <section class="actions">
      <h2>Actions</h2>
      {!changeable && (
        <p class="hint">{apiKey.state === 'revoked' ? 'A revoked key cannot change.' : 'This key was rotated: change its successor.'}</p>
      )}
      {changeable && <EditKey key={`${apiKey.id} ${apiKey.updatedAt}`} apiKey={apiKey} customer={customer} onChanged={onChanged} />}
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
              // The banner goes with the new key, to its page; this page never shows it.
              handOverSecret(rotated.apiKey.id, rotated.key)
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

/** A field's value as the confirmation shows it. */
const shown = (field: string, value: unknown): string => {
  if (value === null || value === undefined) return field === 'expiresAt' ? 'never' : 'none'
  if (field === 'expiresAt') return time(value as string)
  if (field === 'scopes') return scopesText(value as Scope[])
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** The fields an update can change; only those that differ from the key are sent. */
function EditKey({ apiKey, customer, onChanged }: { apiKey: AdminKey; customer?: AdminCustomer | null; onChanged: () => void }) {
  const ofCustomer = apiKey.customerId !== null
  const initial = () => ({
    name: apiKey.name,
    plan: apiKey.plan,
    perMinute: String(apiKey.perMinute),
    perDay: String(apiKey.perDay),
    expiresAt: toUtcInput(apiKey.expiresAt),
    metadata: metadataText(apiKey.metadata),
  })
  const [form, setForm] = useState(initial)
  const [scopes, setScopes] = useState<Scope[]>(apiKey.scopes)
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState<string>()
  const [saved, setSaved] = useState(false)

  /** The body to send; throws when the expiry or the metadata cannot be read (nothing is sent). */
  const changes = (): Record<string, unknown> => {
    const body: Record<string, unknown> = {}
    if (form.name !== apiKey.name) body.name = form.name
    if (!ofCustomer && form.plan !== apiKey.plan) body.plan = form.plan
    if (!ofCustomer && form.plan === 'enterprise') {
      if (form.plan !== apiKey.plan || Number(form.perMinute) !== apiKey.perMinute) body.perMinute = Number(form.perMinute)
      if (form.plan !== apiKey.plan || Number(form.perDay) !== apiKey.perDay) body.perDay = Number(form.perDay)
    }
    const expiresAt = fromUtcInput(form.expiresAt)
    if (toUtcInput(expiresAt) !== toUtcInput(apiKey.expiresAt)) body.expiresAt = expiresAt
    const metadata = parseMetadata(form.metadata)
    if (JSON.stringify(metadata) !== JSON.stringify(apiKey.metadata)) body.metadata = metadata
    // Both in the list's order (the API answers them so, toggleScope keeps them so). None chosen:
    // the fieldset says so, and the form sends nothing.
    if (scopes.length > 0 && scopes.join(' ') !== apiKey.scopes.join(' ')) body.scopes = scopes
    return body
  }
  let pending: Record<string, unknown> = {}
  let invalid: string | undefined
  const noScope = scopes.length === 0
  try {
    pending = changes()
  } catch (e) {
    invalid = problem(e)
  }
  const set =
    (field: keyof ReturnType<typeof initial>) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement }) => {
      setSaved(false)
      setConfirming(false)
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
  const old = apiKey as unknown as Record<string, unknown>
  return (
    <form
      class="edit"
      onSubmit={(e) => {
        e.preventDefault()
        if (invalid === undefined && !noScope && Object.keys(pending).length > 0) setConfirming(true)
      }}
    >
      <Field label="Name">
        <input name="name" value={form.name} onInput={set('name')} />
      </Field>
      <Field label="Plan">
        <select name="plan" value={form.plan} disabled={ofCustomer} onChange={set('plan')}>
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
          disabled={ofCustomer || form.plan !== 'enterprise'}
          onInput={set('perMinute')}
        />
      </Field>
      <Field label="Per day">
        <input
          type="number"
          name="perDay"
          min={1}
          value={form.perDay}
          disabled={ofCustomer || form.plan !== 'enterprise'}
          onInput={set('perDay')}
        />
      </Field>
      {apiKey.customerId !== null && (
        <p class="hint customer-owned">
          Plan and limits are the customer’s, for all its keys: change them on{' '}
          <a href={href.customer(apiKey.customerId)}>{customer ? `${customer.name}’s page` : 'the customer’s page'}</a>.
        </p>
      )}
      <Field label={EXPIRY_LABEL}>
        <input name="expiresAt" placeholder="2027-06-30 18:00" autocomplete="off" value={form.expiresAt} onInput={set('expiresAt')} />
      </Field>
      <Field label='Metadata (a JSON object, e.g. {"customer": "c_42"}; empty: none)'>
        <textarea name="metadata" rows={3} spellcheck={false} value={form.metadata} onInput={set('metadata')} />
      </Field>
      <ScopeChoice
        scopes={scopes}
        onChange={(chosen) => {
          setSaved(false)
          setConfirming(false)
          setScopes(chosen)
        }}
      />
      <ErrorNote message={invalid} />
      {!confirming && (
        <button type="submit" disabled={invalid !== undefined || noScope || Object.keys(pending).length === 0}>
          Save changes…
        </button>
      )}
      {confirming && (
        <div class="confirm" role="dialog" aria-label="Save changes">
          <p>Change {apiKey.id}? Every instance applies it within 2 seconds.</p>
          <table class="diff">
            <tbody>
              {Object.entries(pending).map(([field, value]) => (
                <tr data-field={field}>
                  <th>{field}</th>
                  <td class="old">{shown(field, old[field])}</td>
                  <td>→</td>
                  <td class="new">{shown(field, value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
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
