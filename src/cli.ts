#!/usr/bin/env node
import { ADMIN_TOKENS } from './cli/admin-tokens-command.js'
import { CommandError, HelpRequest, UsageError } from './cli/command-errors.js'
import {
  type Command,
  type CommandGroup,
  type CommandSpec,
  flagLines,
  parseCommand,
  programName,
  resolveCommand,
  seeHelp,
  synopsisLines,
} from './cli/command-line.js'
import { CUSTOMERS } from './cli/customers-command.js'
import { flagOf } from './cli/key-flags.js'
import { KEYS } from './cli/keys-command.js'
import { serveCommand } from './cli/serve-command.js'
import { WEBHOOKS } from './cli/webhooks-command.js'
import { loadConfiguration, takeConfigFileOption } from './config/config-file.js'
import { buildCommandDomain } from './domain.js'
import { CLI } from './shared/command-name.js'
import { Refusal, SUBJECTS, type Subject } from './shared/refusal.js'
import { ConfigError, StartupError, startFailureLine } from './shared/startup-error.js'
import { SERVICE_VERSION } from './shared/version.js'

const GROUPS: Record<string, CommandGroup> = { keys: KEYS, customers: CUSTOMERS, 'admin-tokens': ADMIN_TOKENS, webhooks: WEBHOOKS }

/** `serve`: the server of server.ts, or a cluster of them (imported only when it runs: the other commands start fast). */
const SERVE = serveCommand(async (config, source, workers) => {
  const { startServer } = await import('./server.js')
  if (workers === 1) {
    await startServer(config, source)
    return
  }
  const { startCluster } = await import('./lifecycle/cluster.js')
  await startCluster(config, workers, source, startServer)
})
const COMMAND_NAMES = 'serve, keys, customers, admin-tokens or webhooks'

function help(): string {
  const program = programName()
  return `${[
    `Usage: ${program} COMMAND [options]`,
    '',
    'Commands:',
    ...synopsisLines([SERVE, ...Object.values(GROUPS).flatMap((group) => Object.values(group.commands))]),
    '',
    'Options:',
    ...flagLines(PROGRAM.flags),
    '',
    `A command's options: ${program} COMMAND --help (${program} keys create --help).`,
    "Times are ISO 8601 (2027-01-31T00:00:00Z). Every command reads the server's configuration: .env in the",
    'working directory (or --config-file FILE, or ANIMAL_STORE_CONFIG_FILE; off: none) under the environment.',
    'The database is DATABASE_URL (default data/animal-store.db);',
    `the key prefix follows ANIMAL_STORE_ENV. In the project directory, run it as \`${CLI} ...\` (or`,
    '`npm run keys -- create ...` for the keys commands); `npx animal-store` may fetch a different package of',
    'that name from the npm registry.',
  ].join('\n')}\n`
}

/** The program's own flags, before any command. */
const PROGRAM = {
  path: '',
  synopsis: 'COMMAND [options]',
  description: '',
  flags: { version: { type: 'boolean', help: 'print the version' } },
  help,
} satisfies CommandSpec

/**
 * The command named by the arguments and its own arguments, or 'version'. `at` is told the path as
 * soon as it is known, for the hint at its --help.
 */
function resolve(argv: string[], at: (path: string) => void): { command: Command; args: string[] } | 'version' {
  const [first, ...rest] = argv
  if (first === undefined) throw new UsageError(`missing command: ${COMMAND_NAMES}`)
  if (first === 'serve') return { command: SERVE, args: rest }
  const group = Object.hasOwn(GROUPS, first) ? GROUPS[first] : undefined
  if (group !== undefined) {
    at(group.name)
    return resolveCommand(group, rest)
  }
  if (first === 'help') throw new HelpRequest(help())
  if (!first.startsWith('-')) throw new UsageError(`unknown command ${JSON.stringify(first)}: ${COMMAND_NAMES}`)
  parseCommand(PROGRAM, argv) // --help, or anything but --version refused
  return 'version'
}

/** The command that lists what a `not_found` refusal names, to point at its ids. */
const LISTS: Partial<Record<Subject, string>> = {
  key: 'keys list',
  customer: 'customers list',
  admin_token: 'admin-tokens list',
  webhook_endpoint: 'webhooks list',
  webhook_delivery: 'webhooks deliveries ENDPOINT_ID',
}

/**
 * A service's refusal as the CLI says it (the admin API's is `toApiError`, http/error-handler.ts):
 * fields named as flags, bad input with where the command's help is, an unknown id with the command
 * that lists the ids; one line each.
 */
function refusalText(refusal: Refusal, path: string): string {
  const message = refusal.phrase(flagOf)
  switch (refusal.kind) {
    case 'invalid':
      return `animal-store: ${message}\n${seeHelp(path)}\n`
    case 'not_found': {
      const { type, id } = refusal.subject ?? {}
      const list = type === undefined ? undefined : LISTS[type]
      if (type === undefined || id === undefined || list === undefined) return `animal-store: ${message}\n`
      return `animal-store: no ${SUBJECTS[type]} with id ${id} (${programName()} ${list} shows the ids)\n`
    }
    case 'conflict':
    case 'forbidden':
    case 'order_not_placed':
      // A well-formed command on something in the wrong state (a revoked, rotated or expired key): the admin API's message.
      return `animal-store: ${message}\n`
  }
}

/** What the user is told of an error, and the exit status; anything unforeseen is thrown on. */
function report(error: unknown, path: string): number {
  const fail = (text: string) => {
    process.stderr.write(text)
    return 2
  }
  if (error instanceof HelpRequest) {
    process.stdout.write(error.help)
    return 0
  }
  if (error instanceof Refusal) return fail(refusalText(error, path))
  // One line, and where the command's help is: not the whole usage, which would bury the line.
  if (error instanceof UsageError) return fail(`animal-store: ${error.message}\n${seeHelp(path)}\n`)
  if (path === 'serve' || error instanceof ConfigError) return fail(`${startFailureLine(error)}\n`)
  if (error instanceof CommandError || error instanceof StartupError) return fail(`animal-store: ${error.message}\n`)
  throw error
}

export async function main(argv: string[]): Promise<number> {
  let path = ''
  try {
    const { configFile, args: rest } = takeConfigFileOption(argv)
    const resolved = resolve(rest, (at) => (path = at))
    if (resolved === 'version') {
      // Before the configuration is read: a version needs none, so it cannot fail on one.
      process.stdout.write(`${SERVICE_VERSION}\n`)
      return 0
    }
    const { command, args } = resolved
    path = command.spec.path
    // Arguments are checked before the configuration is read: --help and bad input need no database.
    const work = command.prepare(args)
    const { config, source } = loadConfiguration({ configFile })
    // A command that works on the store gets a domain of its own (domain.ts): storage opened once, no job started.
    await work({ config, source, openDomain: buildCommandDomain })
    return 0
  } catch (error) {
    return report(error, path)
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
