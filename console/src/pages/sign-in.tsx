import { useState } from 'preact/hooks'
import { ApiError, api } from '../api.js'
import { ErrorNote, Field } from '../components.js'

const REFUSED =
  'The admin API refused this token: it is unknown, revoked or mistyped (an API key is not an admin token). ' +
  'Create one with: node dist/cli.js admin-tokens create --name NAME'

/** The sign-in screen: the token is checked against the admin API before it is kept (in this tab only). */
export function SignIn({ onSignedIn, notice }: { onSignedIn: (token: string) => void; notice: string | undefined }) {
  const [token, setToken] = useState('')
  const [error, setError] = useState<string | undefined>(notice)
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    const presented = token.trim()
    if (presented === '') return setError('Enter an admin token (as_admin_…).')
    setBusy(true)
    setError(undefined)
    try {
      await api.check(presented)
      onSignedIn(presented)
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setError(REFUSED)
      else if (e instanceof ApiError) setError(`The admin API answered ${e.status}: ${e.message}`)
      else setError('The admin API could not be reached, or the token has characters no HTTP header can carry.')
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="sign-in">
      <h1>Animal Store — operator console</h1>
      <form onSubmit={submit}>
        <Field label="Admin token">
          <input
            type="password"
            name="token"
            autoComplete="off"
            spellcheck={false}
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
            placeholder="as_admin_…"
          />
        </Field>
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
      <ErrorNote message={error} />
      <p class="hint">The token stays in this browser tab only (sessionStorage) and is sent to the admin API, never elsewhere.</p>
    </main>
  )
}
