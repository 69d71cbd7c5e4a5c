/**
 * A rotation's new secret, handed from the old key's page to the new key's page, which takes it
 * once: the "shown this once" banner belongs to the key it shows, never to the page it was made on,
 * and is gone once that page is left (nothing keeps it: not the address, not storage).
 */
let pending: { keyId: string; secret: string } | undefined

export function handOverSecret(keyId: string, secret: string): void {
  pending = { keyId, secret }
}

/** The secret handed over for this key, if any; forgotten once taken (or when another key's page takes none). */
export function takeSecret(keyId: string): { keyId: string; secret: string } | undefined {
  const taken = pending?.keyId === keyId ? pending : undefined
  pending = undefined
  return taken
}
