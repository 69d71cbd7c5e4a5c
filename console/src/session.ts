import { createContext } from 'preact'
import { useContext } from 'preact/hooks'

/**
 * The admin token of this browser tab: in sessionStorage only (gone with the tab, never in a
 * cookie, a query string or a log). For automation the page also takes it once from its address,
 * `#token=…&key=<keyId>`, and takes it out of the address bar (and the history entry) at once.
 */
/** The admin token the console is signed in with (GET /token): `read` may not change anything. */
export interface AdminTokenInfo {
  id: string
  name: string
  prefix: string
  role: 'read' | 'admin'
  createdAt: string
}

const STORAGE_KEY = 'animal-store.admin-token'

export const session = {
  token: (): string | null => sessionStorage.getItem(STORAGE_KEY),
  signIn: (token: string): void => sessionStorage.setItem(STORAGE_KEY, token),
  signOut: (): void => sessionStorage.removeItem(STORAGE_KEY),
}

/** Reads `#token=…&key=…` if the address has it, keeps the token, and rewrites the address to the key's page (or the list). */
export function consumeTokenFragment(): void {
  const fragment = location.hash.slice(1)
  if (!fragment.startsWith('token=')) return
  const params = new URLSearchParams(fragment)
  const token = params.get('token')
  const key = params.get('key')
  if (token) session.signIn(token)
  const route = key && /^key_[0-9A-Za-z]{16}$/.test(key) ? `#/keys/${key}` : '#/keys'
  history.replaceState(null, '', `${location.pathname}${route}`)
}

/** The token signed in with, once the admin API has said whose it is (GET /token); null until then. */
export const SignedInAs = createContext<AdminTokenInfo | null>(null)

/**
 * Whether the console offers changes (create, update, rotate, revoke, cancel): only to a token of
 * the role `admin`, and not before its role is known. The API refuses a `read` token's change
 * anyway (403 forbidden_role); the console only does not offer what would be refused.
 */
export const useMayChange = (): boolean => useContext(SignedInAs)?.role === 'admin'
