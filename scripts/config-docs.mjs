#!/usr/bin/env node
/**
 * The configuration reference, generated from the table that declares every variable (VARIABLES in
 * src/config/variables.ts): rewrites the table between the markers of docs/configuration.md, and
 * the README's table of the most used variables and their defaults (the README once said
 * `HOST` was `0.0.0.0` when it was `127.0.0.1`).
 * Run: npm run config:generate (which writes src/config/validators.generated.ts too).
 * test/config/config.test.ts fails while a committed table differs from the one the variables give.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

export const CONFIGURATION_MD = fileURLToPath(new URL('../docs/configuration.md', import.meta.url))
export const README_MD = fileURLToPath(new URL('../README.md', import.meta.url))

const BEGIN =
  '<!-- The table below is generated from src/config/variables.ts by `npm run config:generate`: edit the variables, not the table. -->'
const END = '<!-- End of the generated table. -->'

const README_BEGIN =
  '<!-- The table below is generated from src/config/variables.ts by `npm run config:generate`: edit the variables, not the table. -->'
const README_END = '<!-- End of the generated table. -->'

/** The variables the README names, in its order: what a first run or a first deployment sets. */
const README_VARIABLES = [
  'PORT',
  'HOST',
  'ADMIN_PORT',
  'ADMIN_HOST',
  'DATABASE_URL',
  'REDIS_URL',
  'ANIMAL_STORE_ENV',
  'PUBLIC_BASE_URL',
  'TRUST_PROXY',
  'LOG_LEVEL',
  'LOG_FILE',
  'SHUTDOWN_DRAIN_MS',
]

const code = (value) => `\`${value}\``

/** What a variable accepts, from its schema (and its `accepts`, where the type alone does not say). */
function accepts(schema, variable) {
  if (schema.type === 'integer') return `integer ${schema.minimum}–${schema.maximum}`
  if (schema.type === 'boolean') return '`true` or `false` (also `1`/`0`, `yes`/`no`, `on`/`off`)'
  if (schema.const !== undefined) return code(schema.const)
  if (schema.enum !== undefined) return schema.enum.map(code).join(', ')
  if (schema.anyOf !== undefined) return schema.anyOf.map((member) => accepts(member, variable)).join(' or ')
  return variable.accepts ?? 'text'
}

const cell = (text) => String(text).replaceAll('|', '\\|')

/** A variable's default as the docs show it: its own words, else the value, else unset. */
const defaultOf = (variable) => variable.defaultText ?? (variable.default === undefined ? 'unset' : code(variable.default))

/** The reference table: one row per variable, in the order of the declarations. */
export async function configurationTable() {
  const { VARIABLES } = await import('../src/config/variables.ts')
  const rows = Object.entries(VARIABLES).map(([name, variable]) => {
    const fallback = defaultOf(variable)
    return `| ${code(name)} | ${cell(accepts(variable.schema, variable))} | ${cell(fallback)} | ${variable.cli ? 'yes' : ''} | ${cell(variable.description)} |`
  })
  return ['| variable | accepts | default | CLI | meaning |', '|---|---|---|---|---|', ...rows].join('\n')
}

/** The README's table: the most used variables, with their defaults. */
export async function readmeTable() {
  const { VARIABLES } = await import('../src/config/variables.ts')
  const rows = README_VARIABLES.map((name) => {
    const variable = VARIABLES[name]
    if (variable === undefined) throw new Error(`README_VARIABLES names ${name}, which src/config/variables.ts does not declare`)
    return `| ${code(name)} | ${cell(defaultOf(variable))} |`
  })
  return ['| variable | default |', '|---|---|', ...rows].join('\n')
}

/** `file`'s text with `table` between its markers. */
async function withTable(file, begin, end, table) {
  const current = await readFile(file, 'utf8')
  const from = current.indexOf(begin)
  const to = current.indexOf(end)
  if (from < 0 || to < from) throw new Error(`${file} has lost the markers around its table:\n${begin}\n${end}`)
  return `${current.slice(0, from + begin.length)}\n\n${table}\n\n${current.slice(to)}`
}

/** docs/configuration.md with its table as the variables give it. */
export async function generateConfigurationDoc() {
  return withTable(CONFIGURATION_MD, BEGIN, END, await configurationTable())
}

/** README.md with its table of the most used variables as the variables give it. */
export async function generateReadme() {
  return withTable(README_MD, README_BEGIN, README_END, await readmeTable())
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(CONFIGURATION_MD, await generateConfigurationDoc())
  await writeFile(README_MD, await generateReadme())
  process.stdout.write(`wrote the tables of ${CONFIGURATION_MD} and ${README_MD}\n`)
}
