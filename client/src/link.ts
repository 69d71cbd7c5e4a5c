/**
 * The target of `rel="next"` in a Link header (RFC 8288), resolved against `base` (the URL the
 * request went to), so both absolute and relative links work. Undefined without such a link.
 */
export function nextLink(header: string | null, base: string): URL | undefined {
  if (header === null) return undefined
  // link-value = "<" URI-Reference ">" *( ";" link-param ); values are separated by commas that
  // are outside <...> and quoted strings.
  const linkValue = /<([^>]*)>((?:\s*;\s*[^;,=\s]+(?:\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^;,\s]*))?)*)/g
  for (const [, target, params] of header.matchAll(linkValue)) {
    for (const [, name, quoted, token] of params!.matchAll(/;\s*([^;,=\s]+)(?:\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;,\s]*)))?/g)) {
      if (name!.toLowerCase() !== 'rel') continue
      const rels = (quoted ?? token ?? '').toLowerCase().split(/\s+/)
      if (rels.includes('next')) return new URL(target!, base)
    }
  }
  return undefined
}
