// Copies the SQL migrations next to the compiled code (tsc copies only .ts output).
import { cpSync, readdirSync } from 'node:fs'

for (const engine of readdirSync('src/storage', { withFileTypes: true })) {
  if (!engine.isDirectory()) continue
  const from = `src/storage/${engine.name}/migrations`
  try {
    cpSync(from, `dist/storage/${engine.name}/migrations`, { recursive: true })
  } catch (error) {
    if (error.code !== 'ENOENT') throw error
  }
}
