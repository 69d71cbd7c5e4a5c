import { useState } from 'preact/hooks'
import { type AuditEntry, api } from '../api.js'
import { ErrorNote, Field, useLoad } from '../components.js'
import { time } from '../format.js'
import { href, navigate } from '../router.js'

const PAGE_SIZE = 50

/** The audit log, oldest first as the API pages it; filtered by key (the API's filter), paged with its cursor. */
export function AuditLog({ query }: { query: URLSearchParams }) {
  const keyId = query.get('keyId') ?? ''
  const afterText = query.get('after')
  const after = afterText === null ? undefined : Number(afterText)
  const [keyInput, setKeyInput] = useState(keyId)
  const page = useLoad(() => api.auditLog({ keyId: keyId || undefined, after, limit: PAGE_SIZE }), [keyId, after])
  return (
    <main>
      <h1>Audit log</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault()
          navigate(href.audit({ keyId: keyInput.trim() || undefined }))
        }}
      >
        <Field label="Key id">
          <input name="keyId" value={keyInput} placeholder="key_…" onInput={(e) => setKeyInput(e.currentTarget.value)} />
        </Field>
        <button type="submit">Filter</button>
        {keyId && (
          <a class="button" href={href.audit()}>
            All keys
          </a>
        )}
      </form>
      <ErrorNote message={page.error} />
      {page.value && <AuditTable entries={page.value.data} showKey />}
      {page.value && page.value.data.length === 0 && <p class="empty">No entry.</p>}
      <nav class="pager">
        {after !== undefined && (
          <a class="button" href={href.audit({ keyId: keyId || undefined })}>
            First page
          </a>
        )}
        {page.value?.nextAfter != null && (
          <a class="button" href={href.audit({ keyId: keyId || undefined, after: String(page.value.nextAfter) })}>
            Next
          </a>
        )}
      </nav>
    </main>
  )
}

/** The actions that only read: listed greyed, so that the changes stand out. */
const READS = new Set(['key.list', 'key.read', 'key.usage', 'audit_log.list', 'key.usage_history', 'usage.top'])

/** What an entry changed, in one line: its details as the API gives them (never a secret). */
const detailText = (details: Record<string, unknown>) =>
  Object.entries(details)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('; ')

export function AuditTable({ entries, showKey }: { entries: AuditEntry[]; showKey: boolean }) {
  if (entries.length === 0) return <p class="empty">No entry.</p>
  return (
    <table class="audit">
      <thead>
        <tr>
          <th class="num">#</th>
          <th>When</th>
          <th>Who</th>
          <th>Action</th>
          {showKey && <th>Key</th>}
          <th>Details</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((e) => (
          <tr data-action={e.action} data-key-id={e.keyId ?? undefined} class={READS.has(e.action) ? 'read' : ''}>
            <td class="num">{e.seq}</td>
            <td>{time(e.at)}</td>
            <td>
              {e.actor.type} <code>{e.actor.id}</code>
            </td>
            <td>{e.action}</td>
            {showKey && <td>{e.keyId === null ? '—' : <a href={href.key(e.keyId)}>{e.keyId}</a>}</td>}
            <td class="details-text">{detailText(e.details)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
