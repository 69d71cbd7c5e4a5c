import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The pages a reader meets: README.md, every page under docs/ and SECURITY.md, as paths relative to `root`. */
export function userDocs(root = ROOT): string[] {
  const pages = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`)
  return ['README.md', ...pages, 'SECURITY.md']
}
