/**
 * Runs several test files in this one process (node:test collects the tests of every module it
 * imports): the fast tier's way of not paying Node, tsx and the app's modules' start-up (about 2 s
 * of CPU) once per file. `node --import tsx test/run-together.mjs FILE...`
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href)
