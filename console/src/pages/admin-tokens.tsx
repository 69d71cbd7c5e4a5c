import { useContext, useState } from 'preact/hooks'
import { ADMIN_TOKEN_ROLES, type AdminTokenInfo, type AdminTokenSummary, api } from '../api.js'
import { Confirm, ErrorNote, Field, SecretOnce, useLoad } from '../components.js'
import { problem, time } from '../format.js'
import { href, navigate } from '../router.js'
import { SignedInAs, useMayChange } from '../session.js'

const PAGE_SIZE = 20

/**
 * Admin tokens: the list (name, prefix, role, maker, created, state), and for an `admin` token a
 * create form (the secret shown once) and Revoke after a confirmation. The token the console is
 * signed in with has no Revoke: the API refuses a token revoking itself (409), so as not to end this
 * session or lock the last admin out of the console (the CLI revokes any token); a token above it
 * (its maker, …) is refused 409 too, and the confirmation shows why.
 */
export function AdminTokens({ query }: { query: URLSearchParams }) {
  const after = query.get('after') ?? undefined
  const [previous, setPrevious] = useState<Array<string | undefined>>([])
  const page = useLoad(() => api.listAdminTokens({ limit: PAGE_SIZE, after }), [after])
  const mayChange = useMayChange()
  return (
    <main>
      <header class="page-head">
        <h1>Admin tokens</h1>
      </header>
      {mayChange && <CreateAdminToken onCreated={page.reload} />}
      <ErrorNote message={page.error} />
      {page.value && page.value.data.length > 0 && <AdminTokenTable tokens={page.value.data} onChanged={page.reload} />}
      <nav class="pager">
        <button
          type="button"
          disabled={previous.length === 0}
          onClick={() => {
            const target = previous.at(-1)
            setPrevious(previous.slice(0, -1))
            navigate(href.adminTokens({ after: target }))
          }}
        >
          Previous
        </button>
        <button
          type="button"
          disabled={!page.value?.nextAfter}
          onClick={() => {
            setPrevious([...previous, after])
            navigate(href.adminTokens({ after: page.value?.nextAfter ?? undefined }))
          }}
        >
          Next
        </button>
      </nav>
    </main>
  )
}

function CreateAdminToken({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('')
  const [role, setRole] = useState<AdminTokenInfo['role']>('read')
  const [error, setError] = useState<string>()
  const [created, setCreated] = useState<{ token: string; adminToken: AdminTokenSummary }>()
  if (created)
    return (
      <SecretOnce
        what={`${created.adminToken.role} admin token for “${created.adminToken.name}”`}
        secret={created.token}
        onDone={() => setCreated(undefined)}
      />
    )
  return (
    <form
      class="edit"
      aria-label="Create an admin token"
      onSubmit={async (e) => {
        e.preventDefault()
        setError(undefined)
        try {
          setCreated(await api.createAdminToken({ name, role }))
          setName('')
          onCreated()
        } catch (err) {
          setError(problem(err))
        }
      }}
    >
      <Field label="Name">
        <input name="name" required value={name} placeholder="auditor (Dana)" onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field label="Role">
        <select name="role" value={role} onChange={(e) => setRole(e.currentTarget.value as AdminTokenInfo['role'])}>
          {ADMIN_TOKEN_ROLES.map((r) => (
            <option value={r}>{r === 'read' ? 'read (reads only)' : 'admin (everything)'}</option>
          ))}
        </select>
      </Field>
      <button type="submit" class="primary">
        Create token
      </button>
      <p class="hint">
        The new token is made by yours: revoking yours revokes it too. A token that must outlive yours is made with the CLI.
      </p>
      <ErrorNote message={error} />
    </form>
  )
}

/** Who made a token: the CLI, or a token, by name when it is on this page. */
function madeBy(token: AdminTokenSummary, page: AdminTokenSummary[]): string {
  if (token.createdBy === null) return 'CLI'
  return page.find((t) => t.id === token.createdBy)?.name ?? token.createdBy
}

function AdminTokenTable({ tokens, onChanged }: { tokens: AdminTokenSummary[]; onChanged: () => void }) {
  const mayChange = useMayChange()
  const me = useContext(SignedInAs)
  return (
    <table class="admin-tokens">
      <thead>
        <tr>
          <th>Name</th>
          <th>Prefix</th>
          <th>Role</th>
          <th>Made by</th>
          <th>Created</th>
          <th>State</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {tokens.map((token) => (
          <tr data-admin-token-id={token.id}>
            <td title={token.id}>
              {token.name}
              {me?.id === token.id && ' (you)'}
            </td>
            <td>
              <code>{token.prefix}…</code>
            </td>
            <td>{token.role}</td>
            <td title={token.createdBy ?? undefined}>{madeBy(token, tokens)}</td>
            <td>{time(token.createdAt)}</td>
            <td>
              {token.revokedAt === null ? (
                <span class="state state-active">active</span>
              ) : (
                <span class="state state-revoked">revoked {time(token.revokedAt)}</span>
              )}
            </td>
            <td>
              {mayChange && token.revokedAt === null && me?.id !== token.id && (
                <Confirm
                  label="Revoke…"
                  danger
                  question={`Revoke the ${token.role} admin token “${token.name}” (${token.prefix}…), and every admin token made with it or with a token it made? Every instance refuses them within 2 s. This cannot be undone.`}
                  confirmLabel="Revoke token"
                  onConfirm={async () => {
                    await api.revokeAdminToken(token.id)
                    onChanged()
                  }}
                />
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
