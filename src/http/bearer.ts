/**
 * Extracts the token of an `Authorization: Bearer <token>` header (scheme case-insensitive,
 * RFC 9110 section 11.1). Undefined for any other scheme or shape.
 */
export function parseBearer(header: string): string | undefined {
  if (header.length < 8 || header.length > 512) return undefined
  const space = header.indexOf(' ')
  if (space !== 6 || header.slice(0, 6).toLowerCase() !== 'bearer') return undefined
  const token = header.slice(7).trim()
  return token === '' || token.includes(' ') ? undefined : token
}

/** RFC 6750 challenge sent with every 401. */
export function bearerChallenge(error: 'invalid_request' | 'invalid_token'): string {
  return `Bearer realm="animal-store", error="${error}"`
}
