// TypeBox as one file for the compiled service: dist/node_modules/typebox/, which Node's resolution
// finds first for every `import … from 'typebox'` under dist/ (the nearest node_modules), while
// the sources run through tsx (the tests, `npm run dev`) and any dependency keep the installed
// package.
//
// Why: TypeBox 1.x is published as 374 small ES modules, and Node 20's ES module loader pays for
// each one (resolve, read, link): importing it took 300 to 380 ms of CPU, a quarter of a server's
// start and most of a CLI command's (0.45 s). One bundled module of the same code loads in about
// 25 ms. Every process the service starts gains it: each CLI command, each worker, each instance
// of a rolling restart. Only TypeBox: every other dependency is CommonJS or a few modules. The
// bundle is the installed version's code, rebuilt whenever package-lock.json changes
// (scripts/build.mjs), and c8 leaves it out of the coverage as any node_modules folder.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const OUT = join(ROOT, 'dist', 'node_modules', 'typebox')
const installed = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'typebox', 'package.json'), 'utf8'))

mkdirSync(OUT, { recursive: true })
await build({
  stdin: { contents: "export * from 'typebox'\nexport { default } from 'typebox'\n", resolveDir: ROOT, loader: 'js' },
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outfile: join(OUT, 'index.js'),
  legalComments: 'inline',
  logLevel: 'warning',
})
writeFileSync(
  join(OUT, 'package.json'),
  `${JSON.stringify({ name: 'typebox', version: installed.version, license: installed.license, type: 'module', exports: './index.js', description: 'TypeBox bundled into one module by scripts/vendor-typebox.mjs' }, null, 2)}\n`,
)
