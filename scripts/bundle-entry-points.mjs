// A build step after tsc: dist/server.js and dist/cli.js become one file each, with their
// dependencies, so that a process starts without resolving and loading ~900 modules one by one.
// Measured on the 2-core machine: a server start to its banner took 1.35 s of CPU from tsc's
// output and 0.78 s bundled, of which module loading was about half; the test suite starts hundreds
// of servers, and an orchestrator restarting an instance waits for it too. The rest of dist/ stays
// as tsc wrote it (bin/npm-start.mjs and the tests read single modules of it).
//
// What stays outside the bundle, loaded from node_modules at run time: better-sqlite3 (a native
// addon), pg-native (pg's optional native driver), and @fastify/swagger-ui with @fastify/static,
// which find Swagger UI's files relative to their own code (__dirname).
//
// Each module's `import.meta.url` is its own file's URL, as without the bundle: the code finds
// the migrations, the Lua scripts, package.json and the console's build relative to it.
import { readFile } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DIST = join(ROOT, 'dist')
const EXTERNAL = ['better-sqlite3', 'pg-native', '@fastify/swagger-ui', '@fastify/static']

/** Rewrites `import.meta.url` in each of dist/'s modules to that module's own URL. */
const ownFileUrls = {
  name: 'own-file-urls',
  setup(context) {
    context.onLoad({ filter: /\.js$/ }, async ({ path }) => {
      if (!path.startsWith(DIST + sep)) return undefined
      const contents = await readFile(path, 'utf8')
      if (!contents.includes('import.meta.url')) return undefined
      const own = `./${relative(DIST, path).split(sep).join('/')}`
      return {
        contents: contents.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, import.meta.url).href`),
        loader: 'js',
        resolveDir: dirname(path),
      }
    })
  },
}

// One build for both: esbuild reads every input before it writes, so neither bundle reads the other
// (cli.js starts the server through server.js).
await build({
  entryPoints: [join(DIST, 'server.js'), join(DIST, 'cli.js')],
  outdir: DIST,
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  // The CommonJS dependencies call require(): ESM has none, so the bundle makes one.
  banner: { js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);" },
  // Class and function names as written (esbuild would rename two same-named classes of two
  // modules): errors and logs name them.
  keepNames: true,
  // Through tsc's maps to src/: a stack trace under --enable-source-maps names the TypeScript.
  sourcemap: 'linked',
  plugins: [ownFileUrls],
  logLevel: 'warning',
})
