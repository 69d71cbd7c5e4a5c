import { ErrorNote } from './components.js'
import { NO_SCOPE, SCOPE_MEANINGS, SCOPES, type Scope, scopeBadge, scopesText, toggleScope } from './key-scopes.js'

/** One checkbox per scope with what it allows; with none checked, says so (the form refuses to send). */
export function ScopeChoice({ scopes, onChange }: { scopes: Scope[]; onChange: (scopes: Scope[]) => void }) {
  return (
    <fieldset class="scope-choice">
      <legend>Scopes</legend>
      {SCOPES.map((scope) => (
        <label>
          <input
            type="checkbox"
            name="scope"
            value={scope}
            checked={scopes.includes(scope)}
            onChange={(e) => onChange(toggleScope(scopes, scope, e.currentTarget.checked))}
          />{' '}
          <code>{scope}</code> <span class="hint">{SCOPE_MEANINGS[scope]}</span>
        </label>
      ))}
      <ErrorNote message={scopes.length === 0 ? NO_SCOPE : undefined} />
    </fieldset>
  )
}

/** A key's scopes as tags (`all` when it has every one), each with its meaning as a tooltip. */
export function ScopeTags({ scopes }: { scopes: Scope[] }) {
  if (scopesText(scopes) === 'all') return <span class="scope-tag">all</span>
  return (
    <>
      {scopes.map((scope) => (
        <span class="scope-tag" title={SCOPE_MEANINGS[scope]}>
          {scope}
        </span>
      ))}
    </>
  )
}

/** The key list's mark of a key with fewer than all scopes (`data-scopes` is the kind, for tests and styles). */
export function ScopeBadge({ scopes }: { scopes: Scope[] }) {
  const badge = scopeBadge(scopes)
  if (badge === null) return null
  return (
    <span class={`scope-badge scope-${badge.kind}`} data-scopes={badge.kind} title={scopesText(scopes)}>
      {badge.text}
    </span>
  )
}
