import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'
import ts from 'typescript'
import { ERROR_CODES } from '../../client/src/index.js'
// @ts-expect-error: a plain .mjs script, run by tsx
import { generateClientFiles, OPENAPI_JSON, SCHEMA_TS } from '../../scripts/openapi.mjs'
import { ERROR_STATUS } from '../../src/shared/errors.js'

const STALE =
  "is stale: the service's OpenAPI document changed. Run `npm run openapi`, then `npm run typecheck` (the client must still compile), and commit both files"

test("client/openapi.json and client/src/schema.ts are generated from the app's current document", async () => {
  const { openapiJson, schemaTs } = (await generateClientFiles()) as { openapiJson: string; schemaTs: string }
  assert.ok(openapiJson === (await readFile(OPENAPI_JSON, 'utf8')), `client/openapi.json ${STALE}`)
  assert.ok(schemaTs === (await readFile(SCHEMA_TS, 'utf8')), `client/src/schema.ts ${STALE}`)
})

test("the client's error codes are the server's closed list", () => {
  assert.deepEqual([...ERROR_CODES].sort(), Object.keys(ERROR_STATUS).sort())
})

test('every operation of the document is a client method, marked @deprecated exactly when the operation is', async () => {
  const document = JSON.parse(await readFile(OPENAPI_JSON, 'utf8')) as {
    paths: Record<string, Record<string, { operationId: string; deprecated?: boolean }>>
  }
  const operations = Object.values(document.paths).flatMap((item) => Object.values(item))
  assert.ok(operations.length >= 3)

  // A method of AnimalStoreClient named like the operation, or a method of any client class
  // (client.orders.place) that names it in an `@operationId` tag.
  const methods = new Map<string, boolean>()
  for (const file of ['client.ts', 'orders.ts', 'events.ts']) {
    const path = new URL(`../../client/src/${file}`, import.meta.url).pathname
    const source = ts.createSourceFile(path, await readFile(path, 'utf8'), ts.ScriptTarget.ES2022, true)
    source.forEachChild(function visit(node) {
      if (!ts.isClassDeclaration(node)) return
      for (const member of node.members) {
        if (!ts.isMethodDeclaration(member) || !ts.isIdentifier(member.name)) continue
        const deprecated = ts.getJSDocDeprecatedTag(member) !== undefined
        if (node.name?.text === 'AnimalStoreClient') methods.set(member.name.text, deprecated)
        for (const tag of ts.getJSDocTags(member).filter((t) => t.tagName.text === 'operationId'))
          methods.set(String(tag.comment ?? '').trim(), deprecated)
      }
    })
  }
  for (const { operationId, deprecated } of operations) {
    assert.ok(methods.has(operationId), `no client method ${operationId}`)
    assert.equal(methods.get(operationId), deprecated === true, `${operationId}: @deprecated must match the document`)
  }
})
