import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import { problem } from './format.js'
import { useLoadingMark } from './page-state.js'

/** A value loaded from the API: the value, or the error's message while there is none. */
export interface Loaded<T> {
  value: T | undefined
  error: string | undefined
  loading: boolean
  reload: () => void
}

/**
 * Loads `load()` whenever `deps` change (and on reload()); a late answer of an older load is dropped.
 * The answer keeps the deps it answers: a render with other deps is loading from its first commit
 * (the effect that starts the load runs only after the paint), and the page's mark says so.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [generation, setGeneration] = useState(0)
  const wanted = [...deps, generation]
  const [state, setState] = useState<{ value?: T; error?: string; answers?: unknown[] }>({})
  useEffect(() => {
    let current = true
    load().then(
      (value) => current && setState({ value, answers: wanted }),
      (error: unknown) => current && setState({ error: problem(error), answers: wanted }),
    )
    return () => {
      current = false
    }
  }, wanted)
  const loading = state.answers === undefined || !sameDeps(state.answers, wanted)
  useLoadingMark(loading)
  const reload = useCallback(() => setGeneration((g) => g + 1), [])
  return { value: state.value, error: state.error, loading, reload }
}

const sameDeps = (a: unknown[], b: unknown[]) => a.length === b.length && a.every((d, i) => Object.is(d, b[i]))

export const ErrorNote = ({ message }: { message: string | undefined }) =>
  message === undefined ? null : (
    <p class="error" role="alert">
      {message}
    </p>
  )

/**
 * An action that needs a second click: the button opens a panel saying what will happen, with the
 * button that does it and Cancel. `children` are extra inputs (the grace period).
 */
export function Confirm({
  label,
  question,
  confirmLabel,
  danger = false,
  onConfirm,
  children,
}: {
  label: string
  question: string
  confirmLabel: string
  danger?: boolean
  onConfirm: () => Promise<void>
  children?: ComponentChildren
}) {
  const [open, setOpen] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  if (!open)
    return (
      <button type="button" class={danger ? 'danger' : ''} onClick={() => setOpen(true)}>
        {label}
      </button>
    )
  const run = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await onConfirm()
      setOpen(false)
    } catch (e) {
      setError(problem(e))
    } finally {
      setBusy(false)
    }
  }
  return (
    <div class="confirm" role="dialog" aria-label={label}>
      <p>{question}</p>
      {children}
      <ErrorNote message={error} />
      <button type="button" class={danger ? 'danger' : 'primary'} disabled={busy} onClick={run}>
        {confirmLabel}
      </button>
      <button type="button" disabled={busy} onClick={() => setOpen(false)}>
        Cancel
      </button>
    </div>
  )
}

/** A new key (or admin token: `what`), shown this once: the API never returns it again (only its hash is kept). */
export function SecretOnce({ secret, onDone, what = 'key' }: { secret: string; onDone: () => void; what?: string }) {
  const [copied, setCopied] = useState(false)
  const copy = () =>
    navigator.clipboard?.writeText(secret).then(
      () => setCopied(true),
      () => setCopied(false),
    )
  return (
    <div class="secret" role="alert">
      <p>
        <strong>The new {what}, shown this once.</strong> Copy it now: it cannot be shown again.
      </p>
      <code class="secret-value">{secret}</code>
      <div>
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          I have saved it
        </button>
      </div>
    </div>
  )
}

/** A labelled input: the label wraps its control (passed as children), so no id is needed. */
export const Field = ({ label, children }: { label: string; children: ComponentChildren }) => (
  // biome-ignore lint/a11y/noLabelWithoutControl: the control is the child this label wraps
  <label class="field">
    <span>{label}</span>
    {children}
  </label>
)
