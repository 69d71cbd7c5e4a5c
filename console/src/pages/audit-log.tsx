import { useState } from 'preact/hooks'
import { ACTOR_TYPES, AUDIT_ACTIONS, AUDIT_READ_ACTIONS } from '../../../src/changes/audit-actions.js'
import { type AuditEntry, type AuditQuery, api } from '../api.js'
import { auditDetailText } from '../audit-text.js'
import { ErrorNote, Field, useLoad } from '../components.js'
import { time } from '../format.js'
import { href, navigate } from '../router.js'

const PAGE_SIZE = 50

/**
 * The filters of the audit log page, as they stand in the address (`#/audit?kind=all&order=asc`).
 * Without any, newest first and changes only (issue 32): every page view is a read entry, so reads
 * shown by default would bury the changes; `kind=all` shows them too, `order=asc` oldest first.
 */
const FILTERS = ['keyId', 'action', 'actorType', 'actor', 'kind', 'order'] as const
type Filters = Record<(typeof FILTERS)[number], string>

/**
 * The audit log with the API's filters (key, action, actor, changes or reads) and order, kept in the
 * address so a filtered view can be linked; paged with the API's cursor, which follows the order.
 */
export function AuditLog({ query }: { query: URLSearchParams }) {
  const filters = Object.fromEntries(FILTERS.map((name) => [name, query.get(name) ?? ''])) as Filters
  const afterText = query.get('after')
  const after = afterText === null ? undefined : Number(afterText)
  const [keyInput, setKeyInput] = useState(filters.keyId)
  const [actorInput, setActorInput] = useState(filters.actor)
  const apiQuery: AuditQuery = {
    keyId: filters.keyId || undefined,
    action: filters.action || undefined,
    actorType: filters.actorType || undefined,
    actor: filters.actor || undefined,
    kind: filters.kind === 'all' ? undefined : filters.kind === 'read' ? 'read' : 'change',
    order: filters.order === 'asc' ? 'asc' : 'desc',
  }
  const page = useLoad(() => api.auditLog({ ...apiQuery, after, limit: PAGE_SIZE }), [query.toString()])
  // A change of filter starts again at the first page.
  const go = (changes: Partial<Filters>) => navigate(href.audit({ ...filters, ...changes }))
  const filtered = FILTERS.some((name) => filters[name] !== '')
  return (
    <main>
      <h1>Audit log</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault()
          go({ keyId: keyInput.trim(), actor: actorInput.trim() })
        }}
      >
        <Field label="Key id">
          <input name="keyId" value={keyInput} placeholder="key_…" onInput={(e) => setKeyInput(e.currentTarget.value)} />
        </Field>
        <Field label="Action">
          <select name="action" value={filters.action} onChange={(e) => go({ action: e.currentTarget.value })}>
            <option value="">any</option>
            {AUDIT_ACTIONS.map((a) => (
              <option value={a}>{a}</option>
            ))}
          </select>
        </Field>
        <Field label="Reads">
          <select name="kind" value={filters.kind === 'change' ? '' : filters.kind} onChange={(e) => go({ kind: e.currentTarget.value })}>
            <option value="">hidden (changes only)</option>
            <option value="all">shown (changes and reads)</option>
            <option value="read">only (reads only)</option>
          </select>
        </Field>
        <Field label="Actor kind">
          <select name="actorType" value={filters.actorType} onChange={(e) => go({ actorType: e.currentTarget.value })}>
            <option value="">any</option>
            {ACTOR_TYPES.map((a) => (
              <option value={a}>{a}</option>
            ))}
          </select>
        </Field>
        <Field label="Actor id">
          <input name="actor" value={actorInput} placeholder="adm_…, a user" onInput={(e) => setActorInput(e.currentTarget.value)} />
        </Field>
        <Field label="Order">
          <select name="order" value={filters.order === 'asc' ? 'asc' : ''} onChange={(e) => go({ order: e.currentTarget.value })}>
            <option value="">newest first</option>
            <option value="asc">oldest first</option>
          </select>
        </Field>
        <button type="submit">Filter</button>
        {filtered && (
          <a class="button" href={href.audit()}>
            Clear filters
          </a>
        )}
      </form>
      <ErrorNote message={page.error} />
      {page.value && <AuditTable entries={page.value.data} showKey />}
      {page.value && page.value.data.length < PAGE_SIZE && page.value.nextAfter != null && (
        <p class="hint">A page examines a bounded number of entries when filters are combined: Next looks further.</p>
      )}
      <nav class="pager">
        {after !== undefined && (
          <a class="button" href={href.audit(filters)}>
            First page
          </a>
        )}
        {page.value?.nextAfter != null && (
          <a class="button" href={href.audit({ ...filters, after: String(page.value.nextAfter) })}>
            Next
          </a>
        )}
      </nav>
    </main>
  )
}

/** Entries as a table; the reads are greyed, so that the changes stand out. */
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
          <tr
            data-action={e.action}
            data-key-id={e.keyId ?? undefined}
            class={(AUDIT_READ_ACTIONS as readonly string[]).includes(e.action) ? 'read' : ''}
          >
            <td class="num">{e.seq}</td>
            <td>{time(e.at)}</td>
            <td>
              {e.actor.type}{' '}
              {e.actor.name === undefined ? (
                <code>{e.actor.id}</code>
              ) : (
                <span class="actor-name" title={e.actor.id}>
                  {e.actor.name} <code>{e.actor.id}</code>
                </span>
              )}
            </td>
            <td>{e.action}</td>
            {showKey && <td>{e.keyId === null ? '—' : <a href={href.key(e.keyId)}>{e.keyId}</a>}</td>}
            <td class="details-text">{auditDetailText(e)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
