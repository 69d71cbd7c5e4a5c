import type { Scope } from './key-scopes.js'
import { type AdminTokenInfo, session } from './session.js'

export type { AdminTokenInfo }

/** The admin API's shapes the console reads (the schemas of src/admin/keys/, usage/ and audit/ are the contract). */
export type Plan = 'free' | 'pro' | 'business' | 'enterprise'
export type KeyState = 'active' | 'expired' | 'revoked'
export const PLANS: Plan[] = ['free', 'pro', 'business', 'enterprise']
export const STATES: KeyState[] = ['active', 'expired', 'revoked']

export interface AdminKey {
  id: string
  name: string
  plan: Plan
  perMinute: number
  perDay: number
  prefix: string
  /** The quota it counts against: its customer's id, else its rotation chain's. */
  quotaId: string
  /** The customer it belongs to (its plan, limits and quota are the customer's), or null. */
  customerId: string | null
  /** In the list's order; all four for a key created without a choice. */
  scopes: Scope[]
  state: KeyState
  createdAt: string
  updatedAt: string
  expiresAt: string | null
  revokedAt: string | null
  rotatedTo: string | null
  rotatedFrom: string | null
  metadata: Record<string, unknown> | null
  lastUsedAt: string | null
}
export interface KeyPage {
  data: AdminKey[]
  nextAfter: string | null
}
export interface CreatedKey {
  key: string
  apiKey: AdminKey
}
export interface RotatedKey extends CreatedKey {
  previous: AdminKey
}
interface Window {
  limit: number
  used: number
  remaining: number
  resetAt: string
}
export interface KeyUsage {
  keyId: string
  quotaId: string
  minute: Window
  day: Window
  ban: { active: boolean; until: string | null; level: number }
  lastUsedAt: string | null
}
export type AuditQuery = {
  keyId?: string
  action?: string
  actorType?: string
  actor?: string
  kind?: 'change' | 'read'
  order?: 'asc' | 'desc'
  after?: number
  limit?: number
}
export interface AuditEntry {
  seq: number
  at: string
  /** `name`: an admin token's name (absent for the CLI and the system). */
  actor: { type: string; id: string; name?: string }
  action: string
  keyId: string | null
  details: Record<string, unknown>
  requestId: string | null
}
/** An admin token as the list shows it (GET /admin-tokens): never the token itself. */
export interface AdminTokenSummary extends AdminTokenInfo {
  /** The admin token that made it (revoked with it), or null: made with the CLI. */
  createdBy: string | null
  revokedAt: string | null
}
export const ADMIN_TOKEN_ROLES: Array<AdminTokenInfo['role']> = ['read', 'admin']
export interface AuditPage {
  data: AuditEntry[]
  nextAfter: number | null
}
/** The orders resource (src/admin/orders/schemas.ts). */
export type OrderStatus = 'placed' | 'cancelled' | 'completed' | 'expired'
export const ORDER_STATUSES: OrderStatus[] = ['placed', 'cancelled', 'completed', 'expired']
export interface AdminOrder {
  id: number
  petId: number
  status: OrderStatus
  owner: string
  keyId: string
  /** The name of the key that placed it (null: no such key). */
  keyName: string | null
  /** Its customer's id, or null. */
  customerId: string | null
  createdAt: string
  expiresAt: string
  endedAt: string | null
}
export interface OrderPage {
  data: AdminOrder[]
  nextAfter: string | null
}
/** One bucket of GET /admin/v1/keys/{keyId}/usage/history (oldest first, zero-filled). */
export interface UsageBucket {
  start: string
  allowed: number
  rateLimited: number
  banned: number
  status2xx: number
  status4xx: number
  status5xx: number
}
export interface TopKey {
  keyId: string
  name: string
  plan: Plan
  requests: number
  allowed: number
  rateLimited: number
  banned: number
}

/** An answer of the admin API that is not a success: its Error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/** Told when the API refuses the token (401): the app goes back to the sign-in screen with a message. */
let onUnauthorized: (message: string) => void = () => {}
export const whenUnauthorized = (handler: (message: string) => void) => {
  onUnauthorized = handler
}

const API = 'v1' // relative to /admin/console: /admin/v1

type Query = Record<string, string | number | undefined>
const withQuery = (path: string, query: Query = {}) => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value))
  const text = params.toString()
  return text === '' ? path : `${path}?${text}`
}

/** One admin call with this tab's token (never in the URL: the Authorization header). */
export async function call<T>(method: string, path: string, options: { query?: Query; body?: unknown; token?: string } = {}): Promise<T> {
  const token = options.token ?? session.token() ?? ''
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(withQuery(`${API}${path}`, options.query), {
    method,
    headers,
    body: options.body === undefined ? null : JSON.stringify(options.body),
    cache: 'no-store',
    credentials: 'omit',
  })
  const body = (await response.json().catch(() => null)) as { code?: string; message?: string } | null
  if (!response.ok) {
    const error = new ApiError(response.status, body?.code ?? 'unknown', body?.message ?? `${response.status} ${response.statusText}`)
    if (response.status === 401 && options.token === undefined) onUnauthorized(error.message)
    throw error
  }
  return body as T
}

const key = (id: string) => `/keys/${encodeURIComponent(id)}`

export const api = {
  listKeys: (query: { plan?: string; state?: string; name?: string; after?: string; limit?: number }) =>
    call<KeyPage>('GET', '/keys', { query }),
  getKey: (id: string) => call<AdminKey>('GET', key(id)),
  /** The secret in the body, never in a URL. */
  lookupKey: (body: { key: string }) => call<AdminKey>('POST', '/keys/lookup', { body }),
  lookupPrefix: (body: { prefix: string }) => call<KeyPage>('POST', '/keys/lookup', { body: { ...body, limit: 100 } }),
  createKey: (body: Record<string, unknown>) => call<CreatedKey>('POST', '/keys', { body }),
  updateKey: (id: string, body: Record<string, unknown>) => call<AdminKey>('PATCH', key(id), { body }),
  rotateKey: (id: string, gracePeriodSeconds: number) => call<RotatedKey>('POST', `${key(id)}/rotate`, { body: { gracePeriodSeconds } }),
  revokeKey: (id: string) => call<{ apiKey: AdminKey; alreadyRevoked: boolean; alsoRevoked: AdminKey[] }>('POST', `${key(id)}/revoke`),
  keyUsage: (id: string) => call<KeyUsage>('GET', `${key(id)}/usage`),
  usageHistory: (id: string, query: { granularity: 'minute' | 'hour'; from: string; to: string; scope: 'key' | 'chain' }) =>
    call<{ data: UsageBucket[] }>('GET', `${key(id)}/usage/history`, { query }),
  topKeys: (query: { from: string; to: string; by: 'requests' | 'rateLimited'; limit: number }) =>
    call<{ data: TopKey[] }>('GET', '/usage/top', { query }),
  auditLog: (query: AuditQuery) => call<AuditPage>('GET', '/audit-log', { query }),
  listOrders: (query: { status?: string; keyId?: string; customerId?: string; order?: 'asc' | 'desc'; after?: string; limit?: number }) =>
    call<OrderPage>('GET', '/orders', { query }),
  cancelOrder: (id: number) => call<AdminOrder>('POST', `/orders/${id}/cancel`),
  listAdminTokens: (query: { after?: string; limit?: number }) =>
    call<{ data: AdminTokenSummary[]; nextAfter: string | null }>('GET', '/admin-tokens', { query }),
  createAdminToken: (body: { name: string; role: AdminTokenInfo['role'] }) =>
    call<{ token: string; adminToken: AdminTokenSummary }>('POST', '/admin-tokens', { body }),
  revokeAdminToken: (id: string) =>
    call<{ adminToken: AdminTokenSummary; alreadyRevoked: boolean; alsoRevoked: AdminTokenSummary[] }>(
      'POST',
      `/admin-tokens/${encodeURIComponent(id)}/revoke`,
    ),
  /** Who the console is signed in as: the token's name and role. */
  whoAmI: () => call<AdminTokenInfo>('GET', '/token'),
  /** Checks a token before keeping it: a 401 here is the sign-in screen's message, not a sign-out. */
  check: (token: string) => call<AdminTokenInfo>('GET', '/token', { token }),
}
