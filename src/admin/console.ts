import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import helmet from '@fastify/helmet'
import type { FastifyInstance } from 'fastify'
import { staticAssetHandler } from '../http/static-assets.js'
import { ApiError } from '../shared/errors.js'

/** Where the operator console answers, on the admin listener only. */
export const CONSOLE_PATH = '/admin/console'

/**
 * The console's bundle, built by scripts/build-console.mjs from console/src: dist/console/ of the
 * package, found alike from src/admin (tsx) and dist/admin (the build): both are two levels down.
 */
export const CONSOLE_BUILD_DIR = fileURLToPath(new URL('../../dist/console/', import.meta.url))

/** What the build wrote: the content-hashed names of the bundle's script and style sheet. */
export interface ConsoleManifest {
  script: string
  style: string
}

/**
 * The page's policy, the strictest the console runs under: its own script and style sheet only (no
 * inline script or style; uPlot styles its elements through the CSSOM, which style-src does not
 * govern), API calls to this origin only, no form posts, no base, no framing.
 */
const pageHeaders = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      fontSrc: ["'self'"],
      baseUri: ["'none'"],
      formAction: ["'none'"],
      frameAncestors: ["'none'"],
    },
  },
  // The page's address may carry a token in its fragment for a moment: never sent on anyway, and no referrer at all.
  referrerPolicy: { policy: 'no-referrer' as const },
  frameguard: { action: 'deny' as const },
  // Plain HTTP on 127.0.0.1 is the console's usual address; HSTS belongs to a TLS terminator.
  strictTransportSecurity: false,
}

/** The bundle's names change with its content: a browser keeps a file for good and never asks again. */
const ASSET_CACHE = 'public, max-age=31536000, immutable'

/** The one HTML page: it only loads the bundle (relative URLs, so the page also works behind a path prefix). */
export function consolePage({ script, style }: ConsoleManifest): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Animal Store — operator console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="console/assets/${style}">
<script type="module" src="console/assets/${script}"></script>
</head>
<body>
<div id="app"><noscript>The operator console needs JavaScript.</noscript></div>
</body>
</html>
`
}

function readManifest(dir: string): ConsoleManifest | undefined {
  try {
    return JSON.parse(readFileSync(`${dir}manifest.json`, 'utf8')) as ConsoleManifest
  } catch {
    return undefined
  }
}

/**
 * The operator console: GET /admin/console, one HTML page, and its bundle under
 * /admin/console/assets/ (by name only, compressed once: http/static-assets.ts). Public routes (no
 * token: the page signs in against the admin API itself, which every API call needs) under the
 * CSP above. An encapsulated plugin: helmet's headers reach these routes only, never the API's.
 * A checkout that was never built has no bundle: the page then says so (503) and the API works on.
 */
export async function registerConsole(app: FastifyInstance, { dir = CONSOLE_BUILD_DIR }: { dir?: string } = {}): Promise<void> {
  const manifest = readManifest(dir)
  const html = manifest === undefined ? undefined : consolePage(manifest)
  await app.register(async (scope) => {
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, public: true, page: true }
    })
    await scope.register(helmet, pageHeaders)
    scope.get(CONSOLE_PATH, async (_request, reply) => {
      if (html === undefined) throw new ApiError('service_unavailable', 'The console is not built: run npm run build')
      return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html)
    })
    // The address with a slash names the same page: sent to the one address its relative links are written for.
    scope.get(`${CONSOLE_PATH}/`, async (_request, reply) => reply.redirect(CONSOLE_PATH, 308))
    scope.get(`${CONSOLE_PATH}/assets/*`, staticAssetHandler({ dir: `${dir}assets`, cacheControl: ASSET_CACHE }))
  })
}
