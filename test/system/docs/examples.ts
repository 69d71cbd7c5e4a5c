/**
 * The runnable examples of the user docs and how an answer is judged against what they show.
 *
 * A fenced block opened with ```` ```sh runnable ```` is run by test/system/docs/examples.test.ts, one
 * command at a time (a `\` at a line's end continues it), each in a shell of its own with what the
 * page's `export`s before it left (each run once, as in the reader's shell; a shell function lasts
 * for its own line only). Lines `# -> …` after a command are what it prints, each judged on its own:
 *   `# -> HTTP/1.1 201 Created`   the status of a `curl -i` answer
 *   `# -> Name: value`            a header of a `curl -i` answer
 *   `# -> {…}` or `# -> […]`      the JSON body: every field shown has the value shown, and an
 *                                 object shows every field of the answer's, unless it ends with a
 *                                 bare `…` (`{"code":"not_found",…}`: shortened, the fields left out
 *                                 are not compared); an array has the length shown
 *   `# -> any other text`         a line the command prints
 * `…` in a value or a line stands for any text. Other comment lines are for the reader.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface Example {
  /** Where the command starts, for messages: `docs/api.md:42`. */
  where: string
  command: string
  /** The lines shown after `# -> `, in order. */
  shown: string[]
}

export { userDocs } from '../../helpers/docs-pages.js'

/** The commands of a page's runnable blocks, in order. */
export function runnableExamples(page: string, markdown: string): Example[] {
  const examples: Example[] = []
  let inBlock = false
  let pending = ''
  let pendingLine = 0
  const lines = markdown.split('\n')
  lines.forEach((line, index) => {
    if (!inBlock) {
      inBlock = /^```sh runnable\s*$/.test(line)
      return
    }
    if (line.startsWith('```')) {
      inBlock = false
      return
    }
    const shown = /^# -> (.*)$/.exec(line)
    if (shown) {
      const last = examples.at(-1)
      if (last === undefined) throw new Error(`${page}:${index + 1}: output shown before any command`)
      last.shown.push(shown[1]!)
      return
    }
    if (line.startsWith('#') || line.trim() === '') return
    if (pending === '') pendingLine = index + 1
    pending += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line
    if (!line.endsWith('\\')) {
      examples.push({ where: `${page}:${pendingLine}`, command: pending, shown: [] })
      pending = ''
    }
  })
  return examples
}

/** `text` matches `pattern`, where `…` in the pattern stands for any text. */
export function matchesShown(pattern: string, text: string): boolean {
  const source = pattern
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*')
  return new RegExp(`^${source}$`, 's').test(text)
}

/** The key an object shown as shortened (`{"a":1,…}`) holds once parsed: no answer has it. */
export const SHORTENED = '\u0000…'

/**
 * A JSON answer as a page shows it: JSON, where an object may end with a bare `…` (after its last
 * member, or alone: `{…}`) to say it is shortened. Throws, as JSON.parse does, on anything else.
 */
export function parseShown(text: string): unknown {
  let json = ''
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!
    if (inString) {
      json += char
      if (char === '\\') json += text[++i] ?? ''
      else if (char === '"') inString = false
      continue
    }
    if (char === '"') inString = true
    if (char === '…' && /^\s*}/.test(text.slice(i + 1))) {
      const member = `${JSON.stringify(SHORTENED)}:true`
      json = /{\s*$/.test(json) ? json + member : json.replace(/,\s*$/, `,${member}`)
      if (!json.endsWith(member)) throw new SyntaxError(`a bare … must end an object (at ${i} of ${text})`)
      continue
    }
    json += char
  }
  return JSON.parse(json)
}

/**
 * Where `actual` differs from the JSON `shown`, or undefined when it agrees: every field shown has
 * the value shown, and an object shows all the answer's fields unless it is shortened (`…`).
 */
export function jsonDifference(shown: unknown, actual: unknown, path = '$'): string | undefined {
  if (typeof shown === 'string') {
    return typeof actual === 'string' && matchesShown(shown, actual)
      ? undefined
      : `${path}: shown ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual) || actual.length !== shown.length)
      return `${path}: shown ${shown.length} items, got ${JSON.stringify(actual)}`
    for (const [i, item] of shown.entries()) {
      const difference = jsonDifference(item, actual[i], `${path}[${i}]`)
      if (difference) return difference
    }
    return undefined
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return `${path}: shown an object, got ${JSON.stringify(actual)}`
    const fields = Object.entries(shown).filter(([key]) => key !== SHORTENED)
    for (const [key, value] of fields) {
      const difference = jsonDifference(value, (actual as Record<string, unknown>)[key], `${path}.${key}`)
      if (difference) return difference
    }
    const unshown = Object.keys(actual).filter((key) => !(key in shown))
    if (!(SHORTENED in shown) && unshown.length > 0)
      return `${path}: the answer has ${unshown.join(', ')}, not shown: show every field, or end the object with … (shortened)`
    return undefined
  }
  return shown === actual ? undefined : `${path}: shown ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`
}

/** Problems with `stdout` against what the example shows; empty when every shown line holds. */
export function differences(example: Example, stdout: string): string[] {
  const http = /^HTTP\/[\d.]+ (\d{3})/.exec(stdout)
  const split = http ? stdout.search(/\r?\n\r?\n/) : -1
  const head = http ? stdout.slice(0, split < 0 ? undefined : split) : ''
  const body = http ? (split < 0 ? '' : stdout.slice(split).trim()) : stdout.trim()
  const headers = new Map(
    head
      .split(/\r?\n/)
      .slice(1)
      .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as const),
  )
  const problems: string[] = []
  for (const shown of example.shown) {
    const status = /^HTTP\/[\d.]+ (\d{3})\b/.exec(shown)
    const header = /^([A-Za-z][\w-]*): (.*)$/.exec(shown)
    if (status) {
      if (http?.[1] !== status[1]) problems.push(`status: shown ${status[1]}, got ${http?.[1] ?? 'no HTTP answer'}`)
    } else if (/^[[{]/.test(shown)) {
      let actual: unknown
      try {
        actual = JSON.parse(body)
      } catch {
        problems.push(`shown JSON ${shown}, got ${JSON.stringify(body)}`)
        continue
      }
      let expected: unknown
      try {
        expected = parseShown(shown)
      } catch (error) {
        problems.push(`the shown JSON cannot be read: ${(error as Error).message}`)
        continue
      }
      const difference = jsonDifference(expected, actual)
      if (difference) problems.push(difference)
    } else if (http && header) {
      const value = headers.get(header[1]!.toLowerCase())
      if (value === undefined || !matchesShown(header[2]!, value))
        problems.push(`${header[1]}: shown ${header[2]}, got ${value ?? 'no such header'}`)
    } else if (!stdout.split('\n').some((line) => matchesShown(shown, line.trimEnd()))) {
      problems.push(`no line ${JSON.stringify(shown)} in ${JSON.stringify(stdout)}`)
    }
  }
  return problems
}

/** The page's text, read from `root`. */
export const readPage = (root: string, page: string): string => readFileSync(join(root, page), 'utf8')
