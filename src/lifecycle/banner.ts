/**
 * What a person starting the server reads on the terminal: written to stdout as plain text, never
 * through the logger (the first key is a secret, and the rest is for people, not log pipelines).
 */
import { isAbsolute, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CLI_VARIABLES, type Config } from '../config/config.js'
import type { ConfigSource } from '../config/config-file.js'
import { DOCS_PATH, OPENAPI_PATH } from '../http/doc-paths.js'
import type { ApiKeyRecord } from '../keys/api-key.js'
import { CLI } from '../shared/command-name.js'
import { redactUrl } from '../shared/startup-error.js'

/** The project directory, above dist/ (built) or src/ (run through tsx). */
const PROJECT = fileURLToPath(new URL('../../', import.meta.url))
const FROM_SOURCE = import.meta.url.endsWith('.ts')

/** A word a POSIX shell reads back as `value`: quoted only when it has to be. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`
}

/**
 * How to run this process's CLI from `cwd`: `node dist/cli.js` (relative inside the project,
 * absolute outside it), or src/cli.ts through tsx when the server itself runs from source.
 */
export function cliScript(cwd: string): string {
  const fromProject = relative(PROJECT, cwd)
  const inside = !fromProject.startsWith('..') && !isAbsolute(fromProject)
  const script = fileURLToPath(new URL(FROM_SOURCE ? '../cli.ts' : '../cli.js', import.meta.url))
  const shown = shellWord(inside ? relative(cwd, script) : script)
  if (!FROM_SOURCE) return `node ${shown}`
  return `node --import ${inside ? 'tsx' : shellWord(fileURLToPath(import.meta.resolve('tsx')))} ${shown}`
}

const holdsPassword = (value: string) => redactUrl(value) !== value

/**
 * The CLI command that acts on what this server uses, to paste into a shell in the server's
 * directory: the same config file (`--config-file` when it was named) and, before the command, each
 * variable the CLI reads that the server took from its environment, which that shell may lack. A
 * value holding a password is never printed: the command takes it from the shell, and stops there
 * when the shell has none (`\${NAME:?…}`) rather than running on another database.
 */
export function cliCommand(source: ConfigSource, cwd = process.cwd()): string {
  const assignments = CLI_VARIABLES.flatMap((name) => {
    const value = source.environment[name]
    if (value === undefined) return []
    return [`${name}=${holdsPassword(value) ? `"\${${name}:?export it or put it in .env}"` : shellWord(value)}`]
  })
  const configFile = source.named === undefined ? [] : ['--config-file', shellWord(source.named)]
  return [...assignments, cliScript(cwd), ...configFile].join(' ')
}

/**
 * Where the configuration came from and where the log goes: the log shares stdout with this text
 * unless LOG_FILE is set, so its lines follow it once requests arrive.
 */
export function configurationLines(config: Pick<Config, 'logFile'>, source: ConfigSource, cwd = process.cwd()): string[] {
  const where =
    source.file !== undefined
      ? `${source.file} (the environment overrides it; the CLI reads both)`
      : source.named === 'off'
        ? 'environment only (config file off)'
        : 'environment only (no .env here: a .env file is read by server and CLI alike)'
  const secret = CLI_VARIABLES.filter((name) => {
    const value = source.environment[name]
    return value !== undefined && holdsPassword(value)
  })
  return [
    `Config:      ${where}`,
    ...(secret.length === 0
      ? []
      : [
          `             ${secret.join(', ')} (with a password) came from the environment: the commands above read ${secret.length === 1 ? 'it' : 'them'} from your shell; put ${secret.length === 1 ? 'it' : 'them'} in .env to run them anywhere in this directory`,
        ]),
    config.logFile === undefined
      ? 'Log:         stdout, JSON lines (LOG_FILE=path writes them to a file instead)'
      : `Log:         ${resolve(cwd, config.logFile)} (JSON lines)`,
  ]
}

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
export function listeningBanner(address: string, port: number, host: string, notes: string[] = [], cli = CLI): string {
  const origin = reachableOrigin(address, port)
  const where = ALL_INTERFACES.has(address) ? ` (all interfaces: HOST=${host})` : ''
  return (
    [
      `Animal Store API listening on ${origin}${where}`,
      `  API docs:    ${origin}${DOCS_PATH}`,
      `  OpenAPI:     ${origin}${OPENAPI_PATH}`,
      `  New API key: ${cli} keys create --plan free --name NAME`,
      ...notes.map((note) => `  ${note}`),
    ].join('\n') + '\n'
  )
}

/**
 * Where the admin listener is bound (the admin API and /metrics), or that it is off. Its address is
 * shown as bound, so ADMIN_PORT=0 shows the port picked and a wildcard ADMIN_HOST the loopback one.
 */
export function adminBannerLine(admin: { address: string; port: number } | undefined, cli = CLI): string {
  if (admin === undefined) return 'Admin API:   off (ADMIN_PORT=off): no admin API and no /metrics'
  const origin = reachableOrigin(admin.address, admin.port)
  return `Admin API:   ${origin}/admin/v1 (metrics: ${origin}/metrics) — token: ${cli} admin-tokens create --name NAME`
}

/** The one-time display of the key created on a first start, with its id (for `keys revoke`). */
export function firstKeyBanner(key: string, record: Pick<ApiKeyRecord, 'id'>, origin: string, cli = CLI): string {
  return (
    `\nNo API key existed, so one Free key (id ${record.id}) was created. It is shown only this once:\n\n  ${key}\n\n` +
    `Try: curl -H "Authorization: Bearer ${key}" ${origin}/v1/pets\n` +
    `Revoke it with: ${cli} keys revoke ${record.id}\n\n`
  )
}
