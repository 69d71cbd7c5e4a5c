// Copies the non-TypeScript files the code reads at run time next to the compiled code (tsc
// copies only .ts output): the SQL migrations and the Redis Lua scripts.
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

cpSync('src/limits/redis', 'dist/limits/redis', { recursive: true, filter: (path) => !path.endsWith('.ts') })
