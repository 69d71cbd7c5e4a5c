import type { Int64 } from '../../shared/int64.js'

/**
 * A list's `Link: <…>; rel="next"`: the same list (`path`, its limit and status filter) after the
 * last id of this page. Relative unless the operator set a public base URL (`linkBase`), never
 * built from the request's Host header.
 */
export function nextLink(linkBase: string, path: string, page: { limit: number; status: string | undefined; lastId: Int64 }): string {
  const filter = page.status === undefined ? '' : `&status=${page.status}`
  return `<${linkBase}${path}?limit=${page.limit}${filter}&after=${page.lastId}>; rel="next"`
}
