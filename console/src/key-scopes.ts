/**
 * A key's scopes as the console shows and sends them. The list and its meanings are the server's
 * own (src/shared/scopes.ts imports nothing, so the bundle takes it as it is).
 */
import { normalizeScopes, SCOPE_MEANINGS, SCOPES, type Scope } from '../../src/shared/scopes.js'

export { SCOPE_MEANINGS, SCOPES, type Scope }

export const hasAllScopes = (scopes: readonly Scope[]) => SCOPES.every((s) => scopes.includes(s))

/** A key with fewer than all scopes is marked in the list: `read-only` when it can change nothing. */
export function scopeBadge(scopes: readonly Scope[]): { kind: 'read-only' | 'scoped'; text: string } | null {
  if (hasAllScopes(scopes)) return null
  return scopes.every((s) => s.endsWith(':read')) ? { kind: 'read-only', text: 'read-only' } : { kind: 'scoped', text: 'scoped' }
}

/** Scopes in one line (a confirmation, a badge's title): `all`, or each in the list's order. */
export const scopesText = (scopes: readonly Scope[]) => (hasAllScopes(scopes) ? 'all' : normalizeScopes(scopes).join(', '))

/** One checkbox turned on or off: the scopes after it, in the list's order. */
export const toggleScope = (scopes: readonly Scope[], scope: Scope, on: boolean): Scope[] =>
  normalizeScopes(on ? [...scopes, scope] : scopes.filter((s) => s !== scope))

/**
 * What a create body says of scopes: nothing when all are chosen (the API's default), so a key
 * made from the console with the defaults is made like one from any other client.
 */
export const scopesToSend = (scopes: readonly Scope[]): Scope[] | undefined => (hasAllScopes(scopes) ? undefined : normalizeScopes(scopes))

export const NO_SCOPE = 'Choose at least one scope: a key without one could make no request.'
