/**
 * Keeps only the component schemas a document refers to (from its paths and webhooks, transitively). Each
 * OpenAPI document the service serves sees every shared schema of the app; without this the
 * public document would list the admin API's shapes, and the admin document the animals'.
 */
export function keepReferencedSchemas<
  T extends { paths?: unknown; webhooks?: unknown; components?: { schemas?: Record<string, unknown> } },
>(doc: T): T {
  const schemas = doc.components?.schemas
  if (schemas === undefined) return doc
  const kept = new Set<string>()
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) for (const item of node) visit(item)
    else if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
          const name = v.slice('#/components/schemas/'.length)
          if (!kept.has(name)) {
            kept.add(name)
            visit(schemas[name])
          }
        } else visit(v)
      }
    }
  }
  visit(doc.paths)
  visit(doc.webhooks)
  for (const name of Object.keys(schemas)) if (!kept.has(name)) delete schemas[name]
  return doc
}
