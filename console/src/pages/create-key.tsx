import { useState } from 'preact/hooks'
import { type AdminKey, api, PLANS, type Plan } from '../api.js'
import { ErrorNote, Field, SecretOnce } from '../components.js'
import { EXPIRY_LABEL, fromUtcInput, problem } from '../format.js'
import { hasAllScopes, SCOPES, type Scope, scopesText, scopesToSend } from '../key-scopes.js'
import { href } from '../router.js'
import { ScopeChoice } from '../scope-choice.js'

/** Create a key: name, plan (limits for Enterprise), scopes, optional expiry; after a confirmation, the key is shown once. */
export function CreateKey() {
  const [form, setForm] = useState({ name: '', plan: 'free' as Plan, perMinute: '', perDay: '', expiresAt: '' })
  const [scopes, setScopes] = useState<Scope[]>([...SCOPES])
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState<string>()
  const [created, setCreated] = useState<{ key: string; apiKey: AdminKey }>()
  const set = (field: keyof typeof form) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) =>
    setForm({ ...form, [field]: e.currentTarget.value })

  const body = () => {
    const out: Record<string, unknown> = { name: form.name, plan: form.plan }
    if (form.plan === 'enterprise') {
      out.perMinute = Number(form.perMinute)
      out.perDay = Number(form.perDay)
    }
    const expiresAt = fromUtcInput(form.expiresAt)
    if (expiresAt !== null) out.expiresAt = expiresAt
    const chosen = scopesToSend(scopes)
    if (chosen !== undefined) out.scopes = chosen
    return out
  }
  const create = async () => {
    setError(undefined)
    try {
      setCreated(await api.createKey(body()))
      setConfirming(false)
    } catch (e) {
      setError(problem(e))
      setConfirming(false)
    }
  }
  if (created)
    return (
      <main>
        <h1>Key created</h1>
        <SecretOnce secret={created.key} onDone={() => (location.hash = href.key(created.apiKey.id))} />
        <p>
          <a href={href.key(created.apiKey.id)}>
            {created.apiKey.name} ({created.apiKey.id})
          </a>
        </p>
      </main>
    )
  return (
    <main>
      <h1>Create a key</h1>
      <form
        class="edit"
        onSubmit={(e) => {
          e.preventDefault()
          // The fieldset says why; a key without a scope is refused by the API too.
          if (scopes.length > 0) setConfirming(true)
        }}
      >
        <Field label="Name">
          <input name="name" required value={form.name} onInput={set('name')} />
        </Field>
        <Field label="Plan">
          <select name="plan" value={form.plan} onChange={set('plan')}>
            {PLANS.map((p) => (
              <option value={p}>{p}</option>
            ))}
          </select>
        </Field>
        {form.plan === 'enterprise' && (
          <>
            <Field label="Per minute">
              <input type="number" name="perMinute" min={1} required value={form.perMinute} onInput={set('perMinute')} />
            </Field>
            <Field label="Per day">
              <input type="number" name="perDay" min={1} required value={form.perDay} onInput={set('perDay')} />
            </Field>
          </>
        )}
        <Field label={EXPIRY_LABEL}>
          <input name="expiresAt" placeholder="2027-06-30 18:00" autocomplete="off" value={form.expiresAt} onInput={set('expiresAt')} />
        </Field>
        <ScopeChoice
          scopes={scopes}
          onChange={(chosen) => {
            setScopes(chosen)
            setConfirming(false)
          }}
        />
        {!confirming && (
          <button type="submit" class="primary" disabled={scopes.length === 0}>
            Create…
          </button>
        )}
        {confirming && (
          <div class="confirm" role="dialog" aria-label="Create key">
            <p>
              Create a {form.plan} key named “{form.name}”{hasAllScopes(scopes) ? '' : ` with the scopes ${scopesText(scopes)} only`}? Its
              secret is shown once, on the next screen.
            </p>
            <button type="button" class="primary" onClick={create}>
              Create
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        )}
      </form>
      <ErrorNote message={error} />
    </main>
  )
}
