#!/usr/bin/env node
/**
 * The configuration reference, generated from the schema that validates it (CONFIG_SCHEMA in
 * src/config.ts): rewrites the table between the markers of docs/configuration.md.
 * Run: npm run docs:config (= node --import tsx scripts/config-docs.mjs). test/config.test.ts fails
 * while the committed table differs from the one the schema gives.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

export const CONFIGURATION_MD = fileURLToPath(new URL('../docs/configuration.md', import.meta.url))

const BEGIN = '<!-- The table below is generated from src/config.ts by `npm run docs:config`: edit the schema, not the table. -->'
const END = '<!-- End of the generated table. -->'

const code = (value) => `\`${value}\``

/** What a variable accepts, from its schema. */
function accepts(schema) {
  if (schema.type === 'integer') return `integer ${schema.minimum}–${schema.maximum}`
  if (schema.type === 'boolean') return '`true` or `false` (also `1`/`0`, `yes`/`no`, `on`/`off`)'
  if (schema.const !== undefined) return code(schema.const)
  if (schema.anyOf !== undefined) return schema.anyOf.map(accepts).join(schema.anyOf.every((m) => m.const !== undefined) ? ', ' : ' or ')
  return schema.accepts ?? 'text'
}

const cell = (text) => String(text).replaceAll('|', '\\|')

/** The reference table: one row per variable, in the schema's order. */
export async function configurationTable() {
  const { CONFIG_SCHEMA } = await import('../src/config/config.ts')
  const rows = Object.entries(CONFIG_SCHEMA.properties).map(([name, schema]) => {
    const fallback = schema.defaultText ?? (schema.default === undefined ? 'unset' : code(schema.default))
    return `| ${code(name)} | ${cell(accepts(schema))} | ${cell(fallback)} | ${schema.cli ? 'yes' : ''} | ${cell(schema.description)} |`
  })
  return ['| variable | accepts | default | CLI | meaning |', '|---|---|---|---|---|', ...rows].join('\n')
}

/** docs/configuration.md with its table as the schema gives it. */
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
