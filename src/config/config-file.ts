import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs, parseEnv } from 'node:util'
import { errnoText } from '../shared/file-location.js'
import { ConfigError } from '../shared/startup-error.js'
import { CONFIG_VARIABLES, type Config, type ConfigVariable, loadConfig } from './config.js'

/**
 * The one configuration a server and the CLI beside it read: a config file (`.env` in the working
 * directory, or the file `--config-file` or ANIMAL_STORE_CONFIG_FILE names) under the process
 * environment, which overrides it. So whatever started the server is what the CLI sees when it is
 * run in the same directory, without repeating the variables on its command line.
 */

/** The variable naming the config file (`off`: none); `--config-file` wins over it. */
export const CONFIG_FILE_VARIABLE = 'ANIMAL_STORE_CONFIG_FILE'

/** The config file read when none is named, when it exists. */
export const DEFAULT_ENV_FILE = '.env'

/** Where a process's configuration came from: what the start-up banner tells the CLI to read. */
export interface ConfigSource {
  /** The config file read (as named, or `.env`), or undefined when none was. */
  file: string | undefined
  /** The file as `--config-file` or ANIMAL_STORE_CONFIG_FILE named it (`off` included); undefined: the default. */
  named: string | undefined
  /** The service's variables the process environment set, with their values (they win over the file's). */
  environment: Partial<Record<ConfigVariable, string>>
}

export interface LoadedConfig {
  config: Config
  source: ConfigSource
}

interface LoadOptions {
  /** `--config-file`'s value, when given. */
  configFile?: string | undefined
  env?: Record<string, string | undefined>
  cwd?: string
}

/** The configuration of this process: the config file's variables, overridden by the environment's. */
export function loadConfiguration({ configFile, env = process.env, cwd = process.cwd() }: LoadOptions = {}): LoadedConfig {
  const fromVariable = env[CONFIG_FILE_VARIABLE] === '' ? undefined : env[CONFIG_FILE_VARIABLE]
  const named = configFile ?? fromVariable
  const setting = configFile === undefined ? `${CONFIG_FILE_VARIABLE}=${named}` : `--config-file ${named}`
  const file = named === 'off' ? undefined : (named ?? DEFAULT_ENV_FILE)
  const fileVariables = file === undefined ? undefined : readConfigFile(resolve(cwd, file), named === undefined ? file : setting)
  const environment: LoadedConfig['source']['environment'] = {}
  for (const name of CONFIG_VARIABLES) {
    const value = env[name]
    if (value !== undefined) environment[name] = value
  }
  return {
    config: loadConfig({ ...fileVariables, ...environment }),
    source: { file: fileVariables === undefined ? undefined : file, named, environment },
  }
}

/**
 * The variables of a config file (`NAME=value` lines, `#` comments, quotes: node's util.parseEnv),
 * or undefined when the default file does not exist. Every name must be one of the service's: a
 * misspelt variable would otherwise be ignored, silently, as an unknown environment variable is.
 */
function readConfigFile(path: string, shownAs: string): Record<string, string> | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const missing = (error as { code?: unknown }).code === 'ENOENT'
    if (missing && shownAs === DEFAULT_ENV_FILE) return undefined
    throw new ConfigError(`${shownAs}: ${missing ? `${path} does not exist` : `${path} cannot be read: ${errnoText(error)}`}`)
  }
  const variables = parseEnv(text) as Record<string, string>
  const known = new Set<string>(CONFIG_VARIABLES)
  for (const name of Object.keys(variables)) {
    if (!known.has(name)) {
      throw new ConfigError(
        `${shownAs}: ${name} is not a variable of Animal Store (docs/configuration.md lists them); keep other variables in a file of their own`,
      )
    }
  }
  return variables
}

/**
 * `--config-file PATH` (or `--config-file=PATH`) anywhere in `args`, taken out of them: the option
 * every command and the server take, before the command's own options are parsed. Not `--env-file`:
 * Node 20 takes that one anywhere on its command line, after the script too, and loads the file
 * itself (or exits 9 when there is none, as for `off`).
 */
export function takeConfigFileOption(args: string[]): { configFile: string | undefined; args: string[] } {
  const { tokens } = parseArgs({
    args,
    options: { 'config-file': { type: 'string' } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  })
  const taken = new Set<number>()
  let configFile: string | undefined
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name !== 'config-file') continue
    if (token.value === undefined || token.value === '') throw new ConfigError('--config-file needs a file (or off)')
    if (configFile !== undefined) throw new ConfigError('--config-file is given twice')
    configFile = token.value
    taken.add(token.index)
    if (!token.inlineValue) taken.add(token.index + 1)
  }
  return { configFile, args: args.filter((_, index) => !taken.has(index)) }
}
