import { useEffect, useState } from 'preact/hooks'
import { type AdminKey, api, type KeyUsage } from '../api.js'
import { ErrorNote, SecretOnce, useLoad } from '../components.js'
import { CustomerLink, type Customers, sharedBy, sharedByText, useCustomerKeys, useCustomers } from '../customer-links.js'
import { count, time } from '../format.js'
import { StateBadge } from '../key-state.js'
import { href } from '../router.js'
import { ScopeTags } from '../scope-choice.js'
import { takeSecret } from '../secret-handover.js'
import { useMayChange } from '../session.js'
import { AuditTable } from './audit-log.js'
import { KeyActions } from './key-actions.js'
import { UsageChart } from './usage-chart.js'

/** The longest rotation chain the page walks (each step is one getKey). */
const MAX_CHAIN = 25

/** One key: its settings and state, current usage, usage over time, rotation chain, audit entries and actions. */
export function KeyPage({ id }: { id: string }) {
  const mayChange = useMayChange()
  const key = useLoad(() => api.getKey(id), [id])
  const usage = useLoad(() => api.keyUsage(id), [id])
  // A key of a customer: its plan, limits and quota are the customer's, shared by its keys.
  const customerId = key.value?.id === id ? key.value.customerId : null
  const customers = useCustomers([customerId])
  const customerKeys = useCustomerKeys(customerId)
  const customer = customerId === null ? undefined : customers.value?.get(customerId)
  // A rotation's new secret, on the new key's page only: taken when this page shows that key.
  const [secret, setSecret] = useState(() => takeSecret(id))
  useEffect(() => setSecret((shown) => (shown?.keyId === id ? shown : takeSecret(id))), [id])
  const reload = () => {
    key.reload()
    usage.reload()
    customers.reload()
    customerKeys.reload()
  }
  return (
    <main>
      <p class="crumbs">
        <a href={href.keys()}>Keys</a> / <code>{id}</code>
      </p>
      <ErrorNote message={key.error} />
      {secret?.keyId === id && <SecretOnce secret={secret.secret} onDone={() => setSecret(undefined)} />}
      {key.value && (
        <>
          <header class="page-head" data-key-id={key.value.id}>
            <h1>{key.value.name}</h1>
            <StateBadge apiKey={key.value} />
            <button type="button" onClick={reload}>
              Refresh
            </button>
          </header>
          <div class="columns">
            <KeyDetails apiKey={key.value} customers={customers.value} />
            <section class="current-usage">
              <h2>{customerId === null ? 'Current usage' : 'Current usage of the customer’s quota'}</h2>
              <ErrorNote message={usage.error ?? customerKeys.error} />
              {customerId !== null && customerKeys.value && (
                <p class="hint shared-quota" data-shared-by={sharedBy(customerKeys.value).count}>
                  These windows and the ban are <CustomerLink id={customerId} customers={customers.value} />
                  ’s, shared by {sharedByText(customerKeys.value)}: a request of any of them counts here. The chart below counts this key’s
                  own requests.
                </p>
              )}
              {usage.value && <UsageNow usage={usage.value} ofCustomer={customerId !== null} />}
            </section>
          </div>
          <UsageChart
            keyId={id}
            rotated={key.value.rotatedFrom !== null || key.value.rotatedTo !== null}
            title={customerId === null ? undefined : 'This key’s requests over time'}
          />
          {mayChange ? (
            <KeyActions apiKey={key.value} customer={customerId === null ? undefined : (customer ?? null)} onChanged={reload} />
          ) : (
            <p class="hint read-only">Signed in with a read token: this key can be viewed, not changed.</p>
          )}
          <Chain apiKey={key.value} />
          <KeyAudit key={id} id={id} version={key.value.updatedAt} />
        </>
      )}
    </main>
  )
}

function KeyDetails({ apiKey: k, customers }: { apiKey: AdminKey; customers: Customers | undefined }) {
  return (
    <section>
      <h2>Key</h2>
      <dl class="details">
        <dt>Key id</dt>
        <dd>
          <code>{k.id}</code>
        </dd>
        <dt>Customer</dt>
        <dd data-field="customer">
          {k.customerId === null ? (
            'none: its own plan and quota'
          ) : (
            <>
              <CustomerLink id={k.customerId} customers={customers} /> (its plan, limits and quota)
            </>
          )}
        </dd>
        <dt>Prefix</dt>
        <dd>
          <code>{k.prefix}</code>
        </dd>
        <dt>Plan</dt>
        <dd data-field="plan">{k.plan}</dd>
        <dt>Limits</dt>
        <dd data-field="limits">
          {count(k.perMinute)} / minute, {count(k.perDay)} / day
        </dd>
        <dt>Scopes</dt>
        <dd data-field="scopes">
          <ScopeTags scopes={k.scopes} />
        </dd>
        <dt>Created</dt>
        <dd>{time(k.createdAt)}</dd>
        <dt>Expires</dt>
        <dd data-field="expires">{time(k.expiresAt, 'never')}</dd>
        {k.revokedAt && (
          <>
            <dt>Revoked</dt>
            <dd>{time(k.revokedAt)}</dd>
          </>
        )}
        <dt>Last used</dt>
        <dd>{time(k.lastUsedAt, 'never')}</dd>
        <dt>Metadata</dt>
        <dd data-field="metadata">{k.metadata === null ? '—' : <code>{JSON.stringify(k.metadata)}</code>}</dd>
      </dl>
    </section>
  )
}

function UsageNow({ usage, ofCustomer }: { usage: KeyUsage; ofCustomer: boolean }) {
  const row = (label: string, w: KeyUsage['minute']) => (
    <tr>
      <th>{label}</th>
      <td class="num">{count(w.used)}</td>
      <td class="num">{count(w.limit)}</td>
      <td class="num">{count(w.remaining)}</td>
      <td>{time(w.resetAt)}</td>
    </tr>
  )
  return (
    <>
      <table class="usage-now" data-minute-used={usage.minute.used} data-day-used={usage.day.used}>
        <thead>
          <tr>
            <th />
            <th class="num">Used</th>
            <th class="num">Limit</th>
            <th class="num">Remaining</th>
            <th>Resets</th>
          </tr>
        </thead>
        <tbody>
          {row('This minute', usage.minute)}
          {row('Today (UTC)', usage.day)}
        </tbody>
      </table>
      <p>
        {usage.ban.active ? <strong class="state state-revoked">Banned until {time(usage.ban.until)}</strong> : 'Not banned'}
        {usage.ban.level > 0 && ` (ban level ${usage.ban.level})`}
        {!ofCustomer && usage.quotaId !== usage.keyId && (
          <>
            {' '}
            · quota shared with its rotation chain (<code>{usage.quotaId}</code>)
          </>
        )}
      </p>
    </>
  )
}

/** The rotation chain: from the first key to the last, walked through rotatedFrom and rotatedTo. */
function Chain({ apiKey }: { apiKey: AdminKey }) {
  const chain = useLoad(async () => {
    const before: AdminKey[] = []
    let k = apiKey
    while (k.rotatedFrom !== null && before.length < MAX_CHAIN) {
      k = await api.getKey(k.rotatedFrom)
      before.unshift(k)
    }
    const after: AdminKey[] = []
    k = apiKey
    while (k.rotatedTo !== null && after.length < MAX_CHAIN) {
      k = await api.getKey(k.rotatedTo)
      after.push(k)
    }
    return [...before, apiKey, ...after]
  }, [apiKey.id, apiKey.updatedAt, apiKey.rotatedTo])
  if (apiKey.rotatedFrom === null && apiKey.rotatedTo === null) return null
  return (
    <section class="chain">
      <h2>Rotation chain</h2>
      <ErrorNote message={chain.error} />
      <ol>
        {chain.value?.map((k) => (
          <li data-key-id={k.id} class={k.id === apiKey.id ? 'current' : ''}>
            {k.id === apiKey.id ? <code>{k.id}</code> : <a href={href.key(k.id)}>{k.id}</a>} <code>{k.prefix}</code>{' '}
            <StateBadge apiKey={k} /> created {time(k.createdAt)}
            {k.expiresAt && `, expires ${time(k.expiresAt)}`}
          </li>
        ))}
      </ol>
    </section>
  )
}

const KEY_AUDIT_LIMIT = 100

/**
 * The key's audit entries, newest first and changes only: each visit of this page adds three read
 * entries, so on a much-viewed key the reads would bury its changes. "Include reads" shows them
 * too (greyed). The API pages in the listing's order, so "Older entries" follows its cursor and
 * "Newer entries" goes back along the cursors already seen.
 */
function KeyAudit({ id, version }: { id: string; version: string }) {
  const [withReads, setWithReads] = useState(false)
  const [after, setAfter] = useState<number>()
  // The cursors of the pages before this one, for "Newer entries".
  const [previous, setPrevious] = useState<Array<number | undefined>>([])
  const page = useLoad(
    () => api.auditLog({ keyId: id, order: 'desc', kind: withReads ? undefined : 'change', limit: KEY_AUDIT_LIMIT, after }),
    [id, version, after, withReads],
  )
  const next = page.value?.nextAfter ?? null
  const entries = page.value?.data ?? []
  const pager = (
    <nav class="pager">
      <button
        type="button"
        disabled={previous.length === 0}
        onClick={() => {
          setAfter(previous.at(-1))
          setPrevious(previous.slice(0, -1))
        }}
      >
        ← Newer entries
      </button>
      <button
        type="button"
        disabled={next === null}
        onClick={() => {
          setPrevious([...previous, after])
          setAfter(next ?? undefined)
        }}
      >
        Older entries →
      </button>
    </nav>
  )
  return (
    <section class="key-audit">
      <h2>
        Audit entries <a href={href.audit({ keyId: id, kind: withReads ? 'all' : undefined })}>(in the audit log)</a>
      </h2>
      <label class="toggle">
        <input
          type="checkbox"
          name="withReads"
          checked={withReads}
          onChange={(e) => {
            setWithReads(e.currentTarget.checked)
            setAfter(undefined)
            setPrevious([])
          }}
        />{' '}
        Include reads
      </label>
      <ErrorNote message={page.error} />
      {page.value && (
        <>
          <p class="hint">
            Newest first, {withReads ? 'changes and reads (greyed)' : 'changes only'}, {KEY_AUDIT_LIMIT} a page
            {entries.length > 0 && ` (#${entries[0]!.seq} to #${entries.at(-1)!.seq})`}.
          </p>
          <AuditTable entries={entries} showKey={false} />
          {(next !== null || previous.length > 0) && pager}
        </>
      )}
    </section>
  )
}
