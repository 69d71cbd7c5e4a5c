/**
 * The service's version: package.json's, read once. The file sits one directory above this
 * module both in src/ (run by tsx) and in dist/ (built), so one relative URL serves both.
 */
import { readFileSync } from 'node:fs'

export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version
