#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { CLI } from './banner.js'
import { ADMIN_TOKENS_USAGE, AdminTokenInputError, adminTokensCommand } from './cli/admin-tokens-command.js'
import { CommandError, inputErrorMessage, KEYS_USAGE, keysCommand, UsageError } from './cli/keys-command.js'
import { type Config, ConfigError } from './config.js'
import { type ConfigSource, loadConfiguration, takeConfigFileOption } from './config-file.js'
import { KeyConflictError, KeyInputError, KeyNotFoundError } from './keys/administration.js'
import { StartupError, startFailureLine } from './startup-error.js'
import { SERVICE_VERSION } from './version.js'

const USAGE = `Usage:
  animal-store serve [--workers N]
  animal-store --version
${KEYS_USAGE}
${ADMIN_TOKENS_USAGE}

Times are ISO 8601 (2027-01-31T00:00:00Z). Every command reads the server's configuration: .env in
the working directory (or --config-file FILE, or ANIMAL_STORE_CONFIG_FILE; off: none) under the
environment. The database is DATABASE_URL (default data/animal-store.db); the key prefix follows
ANIMAL_STORE_ENV. In the project directory, run it as \`${CLI} ...\` or
\`npm run keys -- ...\` (\`npx animal-store\` may fetch a different package of that name from the npm registry).`

function positiveInt(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw)) throw new UsageError(`${flag} must be a positive integer (got ${JSON.stringify(raw)})`)
  return Number(raw)
}

async function serve(config: Config, source: ConfigSource, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, strict: true, options: { workers: { type: 'string' } } })
  const workers = positiveInt('--workers', values.workers) ?? 1
  if (workers < 1 || workers > 64) throw new UsageError('--workers must be from 1 to 64')
  if (workers === 1) {
    const { startServer } = await import('./server.js')
    await startServer(config, source)
    return
  }
  const { startCluster } = await import('./cluster.js')
  await startCluster(config, workers, source)
}

export async function main(argv: string[]): Promise<number> {
  let command: string | undefined
  try {
    const { configFile, args } = takeConfigFileOption(argv)
    const [name, ...rest] = args
    command = name
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      process.stdout.write(USAGE + '\n')
      return command === undefined ? 2 : 0
    }
    // Before the configuration is loaded: a version needs no database and cannot fail on one.
    if (command === '--version') {
      process.stdout.write(SERVICE_VERSION + '\n')
      return 0
    }
    const { config, source } = loadConfiguration({ configFile })
    if (command === 'keys') await keysCommand(config, rest)
    else if (command === 'admin-tokens') await adminTokensCommand(config, rest)
    else if (command === 'serve') await serve(config, source, rest)
    else throw new UsageError(`unknown command ${JSON.stringify(command)}`)
    return 0
  } catch (error) {
    if (error instanceof KeyConflictError) {
      // A well-formed command on a key in the wrong state (revoked, rotated, expired): one line, the admin API's 409 message.
      process.stderr.write(`animal-store: ${error.message}\n`)
      return 2
    }
    const usage =
      error instanceof UsageError ||
      error instanceof KeyInputError ||
      error instanceof AdminTokenInputError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    if (usage) {
      const message = error instanceof KeyInputError ? inputErrorMessage(error) : (error as Error).message
      process.stderr.write(`animal-store: ${message}\n\n${USAGE}\n`)
      return 2
    }
    if (error instanceof KeyNotFoundError) {
      process.stderr.write(`animal-store: no key with id ${error.id} (${CLI} keys list shows the ids)\n`)
      return 2
    }
    if (command === 'serve' || error instanceof ConfigError) {
      process.stderr.write(startFailureLine(error) + '\n')
      return 2
    }
    if (error instanceof CommandError || error instanceof StartupError) {
      process.stderr.write(`animal-store: ${error.message}\n`)
      return 2
    }
    throw error
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`animal-store: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
