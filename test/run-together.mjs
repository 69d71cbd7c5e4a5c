/**
 * Runs several test files in this one process (node:test collects the tests of every module it
 * imports): the fast tier's way of not paying Node, tsx and the app's modules' start-up (about 2 s
 * of CPU) once per file. `node --import tsx test/run-together.mjs FILE...`
 *
 * Outside `node --test`, node:test reports and sets the exit code when the event loop empties. A
 * test that leaves a handle open (a client not closed, a timer) would keep this process, and CI,
 * waiting for ever: once every test has ended, the process gets a grace period to empty its loop,
 * then fails naming what is still open.
 */

import { resolve } from 'node:path'
import { after } from 'node:test'
import { pathToFileURL } from 'node:url'

const GRACE_MS = 10_000

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href)

// Registered once every file is imported: a root hook added earlier runs as soon as the tests
// queued so far end, which may be before the next file has been loaded.
after(() => {
  setTimeout(() => {
    process.stderr.write(
      `# every test has ended, but ${GRACE_MS / 1000} s later this process still has open handles: ${process.getActiveResourcesInfo().join(', ')}\n`,
    )
    process.exit(1)
  }, GRACE_MS).unref()
})
