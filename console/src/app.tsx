import { useEffect, useState } from 'preact/hooks'
import { type AdminTokenInfo, api, whenUnauthorized } from './api.js'
import { PageShown } from './page-state.js'
import { AdminTokens } from './pages/admin-tokens.js'
import { AuditLog } from './pages/audit-log.js'
import { CreateKey } from './pages/create-key.js'
import { CustomerList, CustomerPage } from './pages/customers.js'
import { KeyList } from './pages/key-list.js'
import { KeyPage } from './pages/key-page.js'
import { OrderList } from './pages/orders.js'
import { SignIn } from './pages/sign-in.js'
import { WebhookPage } from './pages/webhook-page.js'
import { WebhookList } from './pages/webhooks.js'
import { href, useRoute } from './router.js'
import { SignedInAs, session } from './session.js'

const REVOKED_WHILE_SIGNED_IN = 'The admin API no longer accepts your token (revoked, or the store changed). Sign in again.'

export function App() {
  const [token, setToken] = useState(session.token())
  const [notice, setNotice] = useState<string>()
  const [me, setMe] = useState<AdminTokenInfo | null>(null)
  const { route, address } = useRoute()
  useEffect(() => {
    setMe(null)
    if (token === null) return
    // A failure leaves the role unknown, and changes not offered; a 401 signs out (whenUnauthorized).
    api.whoAmI().then(setMe, () => setMe(null))
  }, [token])
  useEffect(
    () =>
      whenUnauthorized(() => {
        session.signOut()
        setNotice(REVOKED_WHILE_SIGNED_IN)
        setToken(null)
      }),
    [],
  )
  if (token === null)
    return (
      <SignIn
        notice={notice}
        onSignedIn={(t) => {
          session.signIn(t)
          setNotice(undefined)
          setToken(t)
        }}
      />
    )
  const mayChange = me?.role === 'admin'
  return (
    <SignedInAs.Provider value={me}>
      <nav class="top">
        <strong>Animal Store console</strong>
        <a href={href.keys()} aria-current={route.page === 'keys' || route.page === 'key' ? 'page' : undefined}>
          Keys
        </a>
        {mayChange && (
          <a href={href.newKey()} aria-current={route.page === 'new' ? 'page' : undefined}>
            Create key
          </a>
        )}
        <a href={href.audit()} aria-current={route.page === 'audit' ? 'page' : undefined}>
          Audit log
        </a>
        <a href={href.orders()} aria-current={route.page === 'orders' ? 'page' : undefined}>
          Orders
        </a>
        <a href={href.customers()} aria-current={route.page === 'customers' || route.page === 'customer' ? 'page' : undefined}>
          Customers
        </a>
        <a href={href.adminTokens()} aria-current={route.page === 'adminTokens' ? 'page' : undefined}>
          Admin tokens
        </a>
        <a href={href.webhooks()} aria-current={route.page === 'webhooks' || route.page === 'webhook' ? 'page' : undefined}>
          Webhooks
        </a>
        {me !== null && (
          <span class="signed-in-as" title={`${me.id} (${me.prefix}…)`}>
            signed in as {me.name} ({me.role})
          </span>
        )}
        <button
          type="button"
          class="sign-out"
          onClick={() => {
            session.signOut()
            setToken(null)
          }}
        >
          Sign out
        </button>
      </nav>
      <PageShown page={route.page} address={address}>
        {route.page === 'keys' && <KeyList query={route.query} />}
        {route.page === 'key' && <KeyPage id={route.id} />}
        {route.page === 'new' &&
          (mayChange ? (
            <CreateKey />
          ) : (
            <main>
              <p class="hint read-only">{me === null ? 'Loading…' : `Signed in with a ${me.role} token: it cannot create keys.`}</p>
            </main>
          ))}
        {/* Keyed by its address: "Clear filters" or a link to another key's entries starts the form afresh. */}
        {route.page === 'audit' && <AuditLog key={route.query.toString()} query={route.query} />}
        {route.page === 'orders' && <OrderList query={route.query} />}
        {route.page === 'customers' && <CustomerList query={route.query} />}
        {route.page === 'customer' && <CustomerPage id={route.id} />}
        {route.page === 'adminTokens' && <AdminTokens query={route.query} />}
        {route.page === 'webhooks' && <WebhookList query={route.query} />}
        {route.page === 'webhook' && <WebhookPage id={route.id} />}
      </PageShown>
    </SignedInAs.Provider>
  )
}
