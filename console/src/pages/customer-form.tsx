import { useEffect, useState } from 'preact/hooks'
import { PLANS, type Plan } from '../api.js'
import { ErrorNote, Field } from '../components.js'
import { customerChanges, customerForm, type CustomerForm as Form } from '../customer-edit.js'
import { type AdminCustomer, customersApi } from '../customers-api.js'
import { problem } from '../format.js'

/** A field's value as the confirmation shows it. */
const shown = (value: unknown): string =>
  value === null || value === undefined ? 'none' : typeof value === 'string' ? value : JSON.stringify(value)

/**
 * The customer's name, plan, limits (Enterprise only) and metadata, changed after a confirmation
 * that lists each change. A plan or limit change applies to every key of the customer, which the
 * confirmation says with how many keys it has (`keys`, in words).
 */
export function EditCustomer({ customer, keys, onChanged }: { customer: AdminCustomer; keys: string; onChanged: () => void }) {
  const [form, setForm] = useState(() => customerForm(customer))
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState<string>()
  const [saved, setSaved] = useState(false)
  // The customer as read again after a save (onChanged): the form starts from it, and "Saved." stays
  // (a form remounted for the new customer lost it at once, before anyone could read it).
  useEffect(() => setForm(customerForm(customer)), [customer.updatedAt])
  let pending: Record<string, unknown> = {}
  let invalid: string | undefined
  try {
    pending = customerChanges(customer, form)
  } catch (e) {
    invalid = problem(e)
  }
  const set = (field: keyof Form) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement }) => {
    setSaved(false)
    setConfirming(false)
    setForm({ ...form, [field]: e.currentTarget.value })
  }
  const save = async () => {
    setError(undefined)
    try {
      await customersApi.update(customer.id, pending)
      setConfirming(false)
      setSaved(true)
      onChanged()
    } catch (e) {
      setError(problem(e))
    }
  }
  const old = customer as unknown as Record<string, unknown>
  const quotaChanges = ['plan', 'perMinute', 'perDay'].some((field) => field in pending)
  return (
    <form
      class="edit customer-edit"
      onSubmit={(e) => {
        e.preventDefault()
        if (invalid === undefined && Object.keys(pending).length > 0) setConfirming(true)
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
      <Field label="Per minute (all its keys)">
        <input
          type="number"
          name="perMinute"
          min={1}
          value={form.perMinute}
          disabled={form.plan !== 'enterprise'}
          onInput={set('perMinute')}
        />
      </Field>
      <Field label="Per day (all its keys)">
        <input type="number" name="perDay" min={1} value={form.perDay} disabled={form.plan !== 'enterprise'} onInput={set('perDay')} />
      </Field>
      <Field label='Metadata (a JSON object, e.g. {"account": "A-1042"}; empty: none)'>
        <textarea name="metadata" rows={3} spellcheck={false} value={form.metadata} onInput={set('metadata')} />
      </Field>
      <ErrorNote message={invalid} />
      {!confirming && (
        <button type="submit" disabled={invalid !== undefined || Object.keys(pending).length === 0}>
          Save changes…
        </button>
      )}
      {confirming && (
        <div class="confirm" role="dialog" aria-label="Save changes">
          <p>
            Change {customer.name} ({customer.id})?
            {quotaChanges && ` The plan and limits apply to ${keys} at once, on every instance within 2 seconds.`}
          </p>
          <table class="diff">
            <tbody>
              {Object.entries(pending).map(([field, value]) => (
                <tr data-field={field}>
                  <th>{field}</th>
                  <td class="old">{shown(old[field])}</td>
                  <td>→</td>
                  <td class="new">{shown(value)}</td>
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
