import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import negotiate from '@fastify/accept-negotiator'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { noRouteError } from './route-fallback.js'

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
}
const COMPRESSIBLE = new Set(['.css', '.html', '.js', '.json', '.svg'])

type Coding = 'br' | 'gzip'
const CODINGS: Coding[] = ['br', 'gzip']
// Each file is compressed once per process, when first asked for, so its first visitor waits for it:
// brotli quality 5 is within 3% of quality 9 at a quarter of the CPU (11 takes seconds for the bundle).
const COMPRESS: Record<Coding, (data: Buffer) => Promise<Buffer>> = {
  br: (data) =>
    promisify(brotliCompress)(data, {
      params: {
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_QUALITY]: 5,
        [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
      },
    }),
  gzip: (data) => promisify(gzip)(data),
}

/** One file of an asset folder: read, hashed and compressed the first time it is asked for, then kept. */
class Asset {
  readonly type: string
  readonly compressible: boolean
  private identity: Promise<{ body: Buffer; tag: string }> | undefined
  private readonly encoded = new Map<Coding, Promise<Buffer>>()

  constructor(private readonly path: string) {
    const ext = extname(path)
    this.type = TYPES[ext] ?? 'application/octet-stream'
    this.compressible = COMPRESSIBLE.has(ext)
  }

  /** The strong ETag of the file in `coding`: one per content coding, as RFC 9110 requires. */
  async etag(coding: Coding | null): Promise<string> {
    const { tag } = await this.read()
    return coding === null ? `"${tag}"` : `"${tag}-${coding}"`
  }

  async body(coding: Coding | null): Promise<Buffer> {
    const { body } = await this.read()
    if (coding === null) return body
    let encoded = this.encoded.get(coding)
    if (encoded === undefined) {
      encoded = COMPRESS[coding](body)
      this.encoded.set(coding, encoded)
    }
    return encoded
  }

  private read() {
    this.identity ??= readFile(this.path).then((body) => ({
      body,
      tag: createHash('sha256').update(body).digest('base64url').slice(0, 22),
    }))
    return this.identity
  }
}

/** If-None-Match (weak comparison, RFC 9110 section 13.1.2) names `etag`. */
function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)
}

export interface AssetFolder {
  /** The folder whose files (not subfolders) are served, by name. A folder that does not exist serves nothing. */
  dir: string
  /** The Cache-Control of every file, e.g. `public, max-age=86400`. */
  cacheControl: string
}

/**
 * The handler of a wildcard route (`.../*`) serving the files of one folder, in place of
 * @fastify/static's (the docs console's /docs/static/*, the admin console's assets): only the files
 * the folder holds when the app is built exist (looked up by name, so no path can leave the
 * folder), anything else is a 404 in the Error shape. Files go out compressed (br or gzip, as the
 * client accepts), compressed once: compressing the 1.5 MB Swagger UI bundle on each request of
 * a public, unlimited path would cost 30-45 ms of CPU per request. No Range or If-Match: a server
 * may ignore them, and these files are small enough whole.
 *
 * Not @fastify/static with files compressed at build time (`preCompressed`), measured against this
 * handler (@fastify/static 9.3 on Swagger UI's files with .br/.gz twins, 8 keep-alive clients):
 * - it costs 2.3 to 3 times the server CPU per request (800 against 310 µs for the bundle in br,
 *   170 against 75 µs for swagger-ui.css in gzip, 135 against 43 µs for a 200-byte file): it stats,
 *   opens and streams the file on every request, where this handler sends a Buffer it keeps;
 * - its answers differ: no `Vary: Accept-Encoding` (a shared cache could hand br to a client
 *   without it), a weak ETag of size and mtime (each build and instance its own, so revalidation
 *   misses across a deploy or a load balancer), gzip for `Accept-Encoding: *`, and a failing
 *   If-Match answered with send's 412 error, which becomes a logged 500 here;
 * - Swagger UI's files are in node_modules: their compressed twins would exist in dist/ only, and a
 *   run from source (tsx, the tests) would send the 1.5 MB bundle uncompressed.
 */
export function staticAssetHandler({
  dir,
  cacheControl,
}: AssetFolder): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  const assets = new Map(
    (existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : [])
      .filter((entry) => entry.isFile())
      .map((entry) => [entry.name, new Asset(join(dir, entry.name))]),
  )
  return async (request, reply) => {
    const asset = assets.get((request.params as { '*': string })['*'])
    if (asset === undefined) throw noRouteError(request)
    const accepted = request.headers['accept-encoding']
    const coding = asset.compressible && accepted !== undefined ? negotiate(accepted.toLowerCase(), CODINGS) : null
    const etag = await asset.etag(coding)
    reply.header('cache-control', cacheControl).header('etag', etag)
    // Appended: CORS, when configured, has set Vary: Origin already.
    if (asset.compressible) reply.header('vary', [reply.getHeader('vary'), 'accept-encoding'].filter(Boolean).join(', '))
    if (notModified(request.headers['if-none-match'], etag)) return reply.code(304).send()
    if (coding !== null) reply.header('content-encoding', coding)
    return reply.type(asset.type).send(await asset.body(coding))
  }
}
