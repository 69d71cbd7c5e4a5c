import { useState } from 'preact/hooks'
import { type AdminKey, ApiError, api } from '../api.js'
import { ErrorNote, Field } from '../components.js'
import { lookupRequest } from '../key-lookup.js'
import { href, navigate } from '../router.js'

/**
 * "Find a key": a whole key or a prefix found in a repository or a log, to the key's page, where
 * revoke is. The key goes in a POST body only: never in the address (fragment routes keep it in
 * the history), and the box is emptied once it is sent.
 */
export function FindKey() {
  const [text, setText] = useState('')
  const [error, setError] = useState<string | undefined>()
  const [found, setFound] = useState<AdminKey[] | undefined>()
  const find = async () => {
    const request = lookupRequest(text)
    setFound(undefined)
    if ('problem' in request) {
      setError(request.problem)
      return
    }
    setError(undefined)
    setText('')
    try {
      if ('key' in request) {
        navigate(href.key((await api.lookupKey(request)).id))
        return
      }
      const page = await api.lookupPrefix(request)
      if (page.data.length === 1) navigate(href.key(page.data[0]!.id))
      else if (page.data.length === 0) setError(`No key has the prefix ${request.prefix}.`)
      else setFound(page.data)
    } catch (e) {
      setError(e instanceof ApiError && e.status === 404 ? 'No key has this secret.' : (e as Error).message)
    }
  }
  return (
    <form
      class="filters find-key"
      onSubmit={(e) => {
        e.preventDefault()
        void find()
      }}
    >
      <Field label="Find a key (whole key or prefix)">
        <input
          type="password"
          name="lookup"
          autocomplete="off"
          spellcheck={false}
          placeholder="as_live_…"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </Field>
      <button type="submit">Find</button>
      <ErrorNote message={error} />
      {found && (
        <ul class="found-keys">
          {found.map((k) => (
            <li>
              <a href={href.key(k.id)}>{k.name}</a> <code>{k.id}</code> <span class={`state state-${k.state}`}>{k.state}</span>
            </li>
          ))}
        </ul>
      )}
    </form>
  )
}
