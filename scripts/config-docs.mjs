#!/usr/bin/env node
/**
 * The configuration reference, generated from the table that declares every variable (VARIABLES in
 * src/config/variables.ts): rewrites the table between the markers of docs/configuration.md.
 * Run: npm run config:generate (which writes src/config/validators.generated.ts too).
 * test/config/config.test.ts fails while the committed table differs from the one the variables give.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

export const CONFIGURATION_MD = fileURLToPath(new URL('../docs/configuration.md', import.meta.url))

const BEGIN =
  '<!-- The table below is generated from src/config/variables.ts by `npm run config:generate`: edit the variables, not the table. -->'
const END = '<!-- End of the generated table. -->'

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

/** The reference table: one row per variable, in the order of the declarations. */
export async function configurationTable() {
  const { VARIABLES } = await import('../src/config/variables.ts')
  const rows = Object.entries(VARIABLES).map(([name, variable]) => {
    const fallback = variable.defaultText ?? (variable.default === undefined ? 'unset' : code(variable.default))
    return `| ${code(name)} | ${cell(accepts(variable.schema, variable))} | ${cell(fallback)} | ${variable.cli ? 'yes' : ''} | ${cell(variable.description)} |`
  })
  return ['| variable | accepts | default | CLI | meaning |', '|---|---|---|---|---|', ...rows].join('\n')
}

/** docs/configuration.md with its table as the variables give it. */
export async function generateConfigurationDoc() {
  const current = await readFile(CONFIGURATION_MD, 'utf8')
  const begin = current.indexOf(BEGIN)
  const end = current.indexOf(END)
  if (begin < 0 || end < begin) throw new Error(`${CONFIGURATION_MD} has lost the markers around its table:\n${BEGIN}\n${END}`)
  return `${current.slice(0, begin + BEGIN.length)}\n\n${await configurationTable()}\n\n${current.slice(end)}`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(CONFIGURATION_MD, await generateConfigurationDoc())
  process.stdout.write(`wrote the table of ${CONFIGURATION_MD}\n`)
}
