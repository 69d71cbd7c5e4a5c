/**
 * What an API key may do (issue 31: Stripe's restricted keys, the Petstore's read/write scopes):
 * a closed list, on the ground floor so that the route config (http/), the key service (keys/),
 * the document and the console's bundle share it. A key without a choice has every scope, so
 * the keys that existed before scopes, and every key created without them, can do what they
 * always could. Each /v1 route names the scope it needs in its config (`scope`); a route without
 * one (GET /v1/rate_limit) is open to any valid key.
 */
export const SCOPES = ['pets:read', 'pets:write', 'orders:read', 'orders:write'] as const
export type Scope = (typeof SCOPES)[number]

/** What each scope lets a key do, in words: the admin document's descriptions and the console's form say the same. */
export const SCOPE_MEANINGS: Readonly<Record<Scope, string>> = {
  'pets:read': 'list and read animals',
  'pets:write': 'add animals',
  'orders:read': 'list and read orders, the inventory',
  'orders:write': 'place, cancel and complete orders',
}

/** Every scope, in the list's order: the default of a new key and of every key made before scopes. */
export const ALL_SCOPES: readonly Scope[] = SCOPES

export const isScope = (value: unknown): value is Scope => typeof value === 'string' && (SCOPES as readonly string[]).includes(value)

/** A key's scopes in one order (the list's), each once: how they are stored, shown and compared. */
export const normalizeScopes = (scopes: readonly Scope[]): Scope[] => SCOPES.filter((s) => scopes.includes(s))

/**
 * Stored as one text of space-separated scopes, as OAuth 2.0 writes a scope list (RFC 6749 section
 * 3.3): the same column type and the same text on both engines, readable in a SQL console, and
 * no JSON to parse on the request path's key lookup.
 */
export const scopesToText = (scopes: readonly Scope[]): string => normalizeScopes(scopes).join(' ')

/** The stored text back to scopes; a word that is no scope (written by a later version) is left out. */
export const scopesFromText = (text: string): Scope[] => normalizeScopes(text.split(' ').filter(isScope))
