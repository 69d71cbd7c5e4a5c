import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { cruise, type IConfiguration } from 'dependency-cruiser'

/*
 * The layering of .dependency-cruiser.cjs (what `npm run lint` checks) against small trees made for
 * the purpose: a folder that no layer names, one API importing the other, a console file taking
 * server code. Each must be refused by its rule, and the same tree without the fault must pass.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const config = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as IConfiguration

async function violations(files: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'layering-'))
  try {
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', jsx: 'react-jsx' } }),
    )
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true })
      writeFileSync(join(dir, path), text)
    }
    // baseDir, never process.chdir: this file shares its process with others (test/run-together.mjs).
    const result = await cruise(
      ['src', 'console'].filter((d) => Object.keys(files).some((f) => f.startsWith(`${d}/`))),
      {
        ruleSet: config,
        validate: true,
        baseDir: dir,
        doNotFollow: { path: 'node_modules' },
        tsPreCompilationDeps: true,
      },
    )
    const output = result.output as { summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> } }
    return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const entry = (imports: string[]) => `${imports.map((i) => `import '${i}'`).join('\n')}\nexport const x = 1\n`

test('a folder in no layer fails lint, seen from either side; the same file in a layer passes', async () => {
  const found = await violations({
    'src/cli.ts': entry(['./gadgets/gadget.js']),
    'src/gadgets/gadget.ts': entry(['../shared/time.js']),
    'src/shared/time.ts': entry([]),
  })
  assert.ok(
    found.some((v) => v.startsWith('every-file-in-a-layer: src/gadgets/gadget.ts -> src/shared/time.ts')),
    found.join('\n'),
  )
  assert.ok(
    found.some((v) => v.startsWith('every-import-in-a-layer: src/cli.ts -> src/gadgets/gadget.ts')),
    found.join('\n'),
  )
  assert.deepEqual(await violations({ 'src/cli.ts': entry(['./shared/gadget.js']), 'src/shared/gadget.ts': entry([]) }), [])
})

test('one API importing the other fails lint', async () => {
  const found = await violations({
    'src/cli.ts': entry(['./api/pets/list.js', './admin/keys/list.js']),
    'src/api/pets/list.ts': entry(['../../admin/keys/list.js']),
    'src/admin/keys/list.ts': entry([]),
  })
  assert.ok(
    found.some((v) => v.startsWith('no-api-imports-another: src/api/pets/list.ts -> src/admin/keys/list.ts')),
    found.join('\n'),
  )
})

test('the console takes from src/ only modules that import nothing', async () => {
  const found = await violations({
    'console/src/main.ts': entry(['../../src/shared/scopes.js', '../../src/keys/key-service.js']),
    'src/shared/scopes.ts': entry(['./other.js']),
    'src/shared/other.ts': entry([]),
    'src/keys/key-service.ts': entry([]),
    'src/cli.ts': entry(['./shared/scopes.js', './keys/key-service.js']),
  })
  assert.ok(
    found.some((v) => v.startsWith('console-takes-only-dependency-free-modules: console/src/main.ts -> src/keys/key-service.ts')),
    found.join('\n'),
  )
  assert.ok(
    found.some((v) => v.startsWith('console-modules-import-nothing: src/shared/scopes.ts -> src/shared/other.ts')),
    found.join('\n'),
  )
})
