import { basename } from 'node:path'
import { parseArgs } from 'node:util'
import type { Config } from '../config/config.js'
import type { ConfigSource } from '../config/config-file.js'
import { CLI } from '../shared/command-name.js'
import type { OpenDomain } from './command-domain.js'
import { HelpRequest, UsageError } from './command-errors.js'

/**
 * The command line of every command: `node:util` parseArgs (strict), a generated --help, and
 * input errors as one line plus where the help is. Commands declare their flags once (name, value,
 * help text); the parser, the help and the error hint all come from that declaration.
 */

export interface Flag {
  type: 'string' | 'boolean'
  /** What the value is, in the help (`NAME`, `ISO`); string flags only. */
  value?: string
  help: string
}

export type Flags = Record<string, Flag>

export interface CommandSpec<F extends Flags = Flags> {
  /** How the command is typed after the program's name: `keys create`. */
  path: string
  /** The synopsis: the command's arguments after its path, one or more lines. */
  synopsis: string
  /** What it does, one or two sentences for its help. */
  description: string
  flags: F
  /** The names of its positional arguments (KEY_ID): exactly these, in this order. */
  operands?: readonly string[]
  /** The operands may also be left out altogether (the command takes its input from a flag instead). */
  operandsOptional?: boolean
  /** A help of its own instead of the generated one (the program's lists the commands). */
  help?: () => string
}

export type FlagValues<F extends Flags> = { [K in keyof F]?: F[K]['type'] extends 'boolean' ? boolean : string }

/**
 * What to type to run the CLI: the installed `animal-store` when run as that, otherwise the
 * project directory's form (`node dist/cli.js`; `npm run keys` runs that too), so that a hint can be
 * pasted as printed.
 */
export function programName(argv1 = process.argv[1] ?? ''): string {
  return basename(argv1) === 'animal-store' ? 'animal-store' : CLI
}

export const seeHelp = (path: string): string => `see: ${[programName(), path].filter(Boolean).join(' ')} --help`

const HELP_FLAG = { help: { type: 'boolean', short: 'h' } } as const

/** The lines of a flag table: `  --per-minute N   text`, aligned. */
export function flagLines(flags: Flags): string[] {
  const rows: Array<[string, string]> = Object.entries(flags).map(([name, flag]) => [
    `--${name}${flag.value === undefined ? '' : ` ${flag.value}`}`,
    flag.help,
  ])
  rows.push(['-h, --help', 'print this help']) // every command has it
  const width = Math.max(...rows.map(([left]) => left.length)) + 2
  return rows.map(([left, text]) => `  ${left.padEnd(width)}${text}`)
}

/** A command's --help. */
function commandHelp(spec: CommandSpec): string {
  const name = `${programName()} ${spec.path}`
  const synopsis = spec.synopsis
    .split('\n')
    .map((line, i) => (i === 0 ? `Usage: ${name} ${line}` : `${' '.repeat(`Usage: ${name} `.length)}${line.trimStart()}`))
  return [...synopsis, '', spec.description, '', 'Options:', ...flagLines(spec.flags)].join('\n') + '\n'
}

/**
 * The command's flags and operands, or a HelpRequest, or a UsageError naming the problem. Strict:
 * an unknown flag, a value missing or given to a boolean, a flag given twice, or a wrong number of
 * operands is refused before anything is done.
 */
export function parseCommand<F extends Flags>(spec: CommandSpec<F>, args: string[]): { values: FlagValues<F>; operands: string[] } {
  const options = {
    ...Object.fromEntries(Object.entries(spec.flags).map(([name, flag]) => [name, { type: flag.type }])),
    ...HELP_FLAG,
  }
  // First leniently, so that --help wins over any mistake beside it (`--name --help` is a name).
  const lenient = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true })
  if (lenient.tokens.some((token) => token.kind === 'option' && token.name === 'help'))
    throw new HelpRequest(spec.help?.() ?? commandHelp(spec))
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; strict: true; allowPositionals: true; tokens: true }>>
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true, tokens: true })
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError(parseArgsMessage((error as Error).message))
    throw error
  }
  const seen = new Set<string>()
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') continue
    if (seen.has(token.name)) throw new UsageError(`--${token.name} must be given once`)
    seen.add(token.name)
  }
  const operands = spec.operands ?? []
  if (parsed.positionals.length !== operands.length && !(spec.operandsOptional === true && parsed.positionals.length === 0)) {
    if (operands.length === 0) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`)
    throw new UsageError(`${spec.path} takes exactly ${operands.length === 1 ? 'one' : operands.length} ${operands.join(' ')}`)
  }
  return { values: parsed.values as FlagValues<F>, operands: parsed.positionals }
}

/**
 * parseArgs's refusal in the words of the other messages, on one line (its own text spans lines and
 * explains `--` to someone who mistyped a flag).
 */
function parseArgsMessage(message: string): string {
  const unknown = /^Unknown option '([^']+)'/.exec(message)
  if (unknown) return `unknown option ${unknown[1]}`
  const missing = /^Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec(message)
  if (missing) return `${missing[1]} needs a value`
  const ambiguous = /^Option '(?:-\w, )?(--[\w-]+)' argument is ambiguous/.exec(message)
  if (ambiguous) return `${ambiguous[1]} needs a value (one that starts with a dash is written ${ambiguous[1]}=-…)`
  const noValue = /^Option '(?:-\w, )?(--[\w-]+)' does not take an argument/.exec(message)
  if (noValue) return `${noValue[1]} takes no value`
  return message.replace(/\n/g, ' ')
}

/** A positive decimal integer flag (no sign, fraction or exponent), or undefined when not given. */
export function positiveInt(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw)) throw new UsageError(`${flag} must be a positive integer (got ${JSON.stringify(raw)})`)
  return Number(raw)
}

/** What a command's work is given: the configuration, where it came from, and how to build its domain (src/cli.ts hands it in). */
export interface CommandRun {
  config: Config
  source: ConfigSource
  openDomain: OpenDomain
}

/** A command: its declaration, and the work its arguments ask for (checked before any is done). */
export interface Command {
  spec: CommandSpec
  /** Parses and checks the arguments (HelpRequest, UsageError) and returns the work, not yet begun. */
  prepare(args: string[]): (run: CommandRun) => Promise<void>
}

export function defineCommand<F extends Flags>(
  spec: CommandSpec<F>,
  prepare: (input: { values: FlagValues<F>; operands: string[] }) => (run: CommandRun) => Promise<void>,
): Command {
  return { spec, prepare: (args) => prepare(parseCommand(spec, args)) }
}

/** Commands under one name (`keys create|list|…`): the help lists their synopses. */
export interface CommandGroup {
  name: string
  description: string
  commands: Record<string, Command>
}

/** The synopses of commands, each under its path, continuation lines aligned. */
export function synopsisLines(commands: Command[], indent = '  '): string[] {
  return commands.flatMap(({ spec }) =>
    spec.synopsis
      .split('\n')
      .map((line, i) => (i === 0 ? `${indent}${spec.path} ${line}` : `${indent}${' '.repeat(spec.path.length + 1)}${line.trimStart()}`)),
  )
}

function groupHelp(group: CommandGroup): string {
  const program = programName()
  return (
    [
      `Usage: ${program} ${group.name} COMMAND [options]`,
      '',
      group.description,
      '',
      'Commands:',
      ...synopsisLines(Object.values(group.commands)),
      '',
      `A command's options: ${program} ${group.name} COMMAND --help`,
    ].join('\n') + '\n'
  )
}

/** `keys create …` -> the command and its arguments; `keys`, `keys --help`: the group's help or an error. */
export function resolveCommand(group: CommandGroup, args: string[]): { command: Command; args: string[] } {
  const [name, ...rest] = args
  const names = Object.keys(group.commands)
  const list = `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`
  if (name === '--help' || name === '-h' || name === 'help') throw new HelpRequest(groupHelp(group))
  if (name === undefined) throw new UsageError(`${group.name} needs a command: ${list}`)
  const command = Object.hasOwn(group.commands, name) ? group.commands[name] : undefined
  if (command === undefined) {
    if (name.startsWith('-')) throw new UsageError(`${group.name} needs a command before its options: ${list}`)
    throw new UsageError(`unknown ${group.name} command ${JSON.stringify(name)}: ${list}`)
  }
  return { command, args: rest }
}
