import { useEffect, useState } from 'preact/hooks'

/**
 * The console's pages are fragment routes (`#/keys`, `#/keys/key_…`, `#/audit`, `#/orders`, `#/admin-tokens`, `#/webhooks`, `#/new`): one HTML
 * page at /admin/console serves them all, a deep link to a key page is just its address, and the
 * fragment never reaches the server or a log. Filters live in the route's query (`#/keys?plan=pro`),
 * so the back button and a shared link keep them.
 */
export type Route =
  | { page: 'keys'; query: URLSearchParams }
  | { page: 'key'; id: string }
  | { page: 'new' }
  | { page: 'audit'; query: URLSearchParams }
  | { page: 'orders'; query: URLSearchParams }
  | { page: 'customers'; query: URLSearchParams }
  | { page: 'customer'; id: string }
  | { page: 'adminTokens'; query: URLSearchParams }
  | { page: 'webhooks'; query: URLSearchParams }
  | { page: 'webhook'; id: string }

export function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?')
  const query = new URLSearchParams(search)
  const key = /^\/keys\/([^/]+)$/.exec(path)
  if (key) return { page: 'key', id: decodeURIComponent(key[1]!) }
  if (path === '/new') return { page: 'new' }
  if (path === '/audit') return { page: 'audit', query }
  if (path === '/orders') return { page: 'orders', query }
  const customer = /^\/customers\/([^/]+)$/.exec(path)
  if (customer) return { page: 'customer', id: decodeURIComponent(customer[1]!) }
  if (path === '/customers') return { page: 'customers', query }
  if (path === '/admin-tokens') return { page: 'adminTokens', query }
  const webhook = /^\/webhooks\/([^/]+)$/.exec(path)
  if (webhook) return { page: 'webhook', id: decodeURIComponent(webhook[1]!) }
  if (path === '/webhooks') return { page: 'webhooks', query }
  return { page: 'keys', query }
}

export const href = {
  keys: (query: Record<string, string | undefined> = {}) => withQuery('#/keys', query),
  key: (id: string) => `#/keys/${encodeURIComponent(id)}`,
  newKey: () => '#/new',
  audit: (query: Record<string, string | undefined> = {}) => withQuery('#/audit', query),
  orders: (query: Record<string, string | undefined> = {}) => withQuery('#/orders', query),
  customers: (query: Record<string, string | undefined> = {}) => withQuery('#/customers', query),
  customer: (id: string) => `#/customers/${encodeURIComponent(id)}`,
  adminTokens: (query: Record<string, string | undefined> = {}) => withQuery('#/admin-tokens', query),
  webhooks: (query: Record<string, string | undefined> = {}) => withQuery('#/webhooks', query),
  webhook: (id: string) => `#/webhooks/${encodeURIComponent(id)}`,
}

function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value) params.set(name, value)
  const text = params.toString()
  return text === '' ? path : `${path}?${text}`
}

export const navigate = (to: string) => {
  location.hash = to
}

/** The route shown and the address it was read from (`#/orders?status=placed`), following the address bar. */
export interface Shown {
  route: Route
  address: string
}

const shown = (): Shown => ({ route: parseRoute(location.hash), address: location.hash })

/** The current route, following the address bar. */
export function useRoute(): Shown {
  const [current, setCurrent] = useState(shown)
  useEffect(() => {
    const update = () => setCurrent(shown())
    addEventListener('hashchange', update)
    return () => removeEventListener('hashchange', update)
  }, [])
  return current
}
