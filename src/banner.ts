/**
 * What a person starting the server reads on the terminal: written to stdout as plain text, never
 * through the logger (the first key is a secret, and the rest is for people, not log pipelines).
 */
import type { ApiKeyRecord } from './keys/api-key.js'

/** The fast form of the CLI from the project directory (`npx animal-store` may go to the npm registry). */
export const CLI = 'node dist/cli.js'

const ALL_INTERFACES = new Set(['0.0.0.0', '::', ''])

/** Where to reach the listener from this machine: a wildcard address becomes the loopback one. */
export function reachableOrigin(address: string, port: number): string {
  const host = address === '0.0.0.0' || address === '' ? '127.0.0.1' : address === '::' ? '::1' : address
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}

/**
 * "Listening" with the addresses of the docs and the OpenAPI document, how to get a key, and any
 * `notes` (a degraded dependency). `address` is the bound address (`0.0.0.0`, `::`, or one address).
 */
export function listeningBanner(address: string, port: number, host: string, notes: string[] = []): string {
  const origin = reachableOrigin(address, port)
  const where = ALL_INTERFACES.has(address) ? ` (all interfaces: HOST=${host})` : ''
  return (
    [
      `Animal Store API listening on ${origin}${where}`,
      `  API docs:    ${origin}/docs`,
      `  OpenAPI:     ${origin}/v1/openapi.json`,
      `  New API key: ${CLI} keys create --plan free --name NAME`,
      ...notes.map((note) => `  ${note}`),
    ].join('\n') + '\n'
  )
}

/**
 * Where the admin listener is bound (the admin API and /metrics), or that it is off. Its address is
 * shown as bound, so ADMIN_PORT=0 shows the port picked and a wildcard ADMIN_HOST the loopback one.
 */
export function adminBannerLine(admin: { address: string; port: number } | undefined): string {
  if (admin === undefined) return 'Admin API:   off (ADMIN_PORT=off): no admin API and no /metrics'
  const origin = reachableOrigin(admin.address, admin.port)
  return `Admin API:   ${origin}/admin/v1 (metrics: ${origin}/metrics) — token: ${CLI} admin-tokens create --name NAME`
}

/** The one-time display of the key created on a first start, with its id (for `keys revoke`). */
export function firstKeyBanner(key: string, record: Pick<ApiKeyRecord, 'id'>, origin: string): string {
  return (
    `\nNo API key existed, so one Free key (id ${record.id}) was created. It is shown only this once:\n\n  ${key}\n\n` +
    `Try: curl -H "Authorization: Bearer ${key}" ${origin}/v1/pets\n` +
    `Revoke it with: ${CLI} keys revoke ${record.id}\n\n`
  )
}
