/**
 * useTempDir (test/system/helpers/process.ts) removes its folder only once the servers the same test
 * started in it have exited: node:test runs `t.after` hooks in the order they were added, so a
 * removal added first would otherwise run while the server still writes into the folder.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { startServer, useTempDir } from '../helpers/process.js'

test("a test's temp dir is removed after the servers it started there have exited", async (t) => {
  const events: string[] = []
  let watcher: NodeJS.Timeout | undefined
  let dir = ''
  const noticeRemoval = () => {
    if (!existsSync(dir) && !events.includes('folder removed')) events.push('folder removed')
  }
  await t.test('a server in a temp dir, left running', async (inner) => {
    dir = await useTempDir(inner)
    const server = await startServer(inner, { dir })
    server.exited.then(() => events.push('server exited'))
    // Notices a removal that the cleanup hooks make while they still wait for the server.
    watcher = setInterval(noticeRemoval, 1)
  })
  clearInterval(watcher)
  noticeRemoval()
  assert.deepEqual(events, ['server exited', 'folder removed'])
})
