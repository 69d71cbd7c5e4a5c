/**
 * A node:test reporter that writes nothing to the output: it appends each failed test to the file
 * named by TEST_FAILURES_FILE, one JSON line each ({file, line, name, message}), so that the runner
 * (test/kinds.mjs) can end a failing run with the names of what failed instead of leaving them
 * hundreds of lines above a coverage table. Every test process appends to the same file, which is
 * why it appends line by line rather than being a reporter destination (those truncate).
 *
 * Only the tests that failed themselves are listed, with the names of the suites and tests they
 * are in ("suite > test"); a parent that failed only because a subtest did is not listed again.
 */
import { appendFileSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** A test file as a path relative to the repository, whatever form node:test gave it in. */
function repositoryPath(file) {
  if (file === undefined) return '(unknown file)'
  const path = file.startsWith('file:') ? fileURLToPath(file) : file
  return relative(ROOT, path)
}

/** The first line of what the failure says (the assertion's message, or the error's). */
function firstLine(error) {
  const cause = error?.cause ?? error
  const text = cause instanceof Error ? cause.message : String(cause?.message ?? cause ?? '')
  return text.split('\n')[0].slice(0, 300)
}

/** node:test's diagnostic for a test whose asynchronous work went on (and failed) after it ended. */
const LATE_ACTIVITY =
  /^Error: Test "(.*)" at (.+?):(\d+):\d+ generated asynchronous activity after the test ended\. This activity created the error "(.*?)"/

export default async function* failuresReporter(source) {
  const target = process.env.TEST_FAILURES_FILE
  /** Failures not yet written: their parents may still add their names. */
  let pending = []
  const write = (records) => {
    if (target === undefined || records.length === 0) return
    appendFileSync(
      target,
      records.map(({ file, line, path, message }) => `${JSON.stringify({ file, line, name: path.join(' > '), message })}\n`).join(''),
    )
  }
  for await (const event of source) {
    if (event.type === 'test:diagnostic') {
      // A test that left a promise to reject after it ended passed, but its process fails: node:test
      // says so only in a diagnostic line, which names the test.
      const late = LATE_ACTIVITY.exec(event.data.message)
      if (late !== null) {
        const [, name, file, line, error] = late
        write([{ file: repositoryPath(file), line: Number(line), path: [`${name} (went on after it ended)`], message: error }])
      }
      continue
    }
    if (event.type !== 'test:fail') continue
    const { name, nesting, file, line, details } = event.data
    const where = repositoryPath(file)
    if (details?.error?.failureType === 'subtestsFailed') {
      // A parent ends after its children: it lends them its name.
      for (const record of pending) {
        if (record.file === where && record.nesting === nesting + 1) {
          record.path.unshift(name)
          record.nesting = nesting
        }
      }
    } else pending.push({ file: where, line, path: [name], nesting, message: firstLine(details?.error) })
    // Written as soon as nothing above them can still add a name, so that a process killed later
    // (a time limit) has still recorded what had failed.
    write(pending.filter((record) => record.nesting === 0))
    pending = pending.filter((record) => record.nesting !== 0)
  }
  write(pending)
}
