import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import helmet from '@fastify/helmet'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { staticAssetHandler } from './static-assets.js'

/** The folder @fastify/swagger-ui serves at /docs/static/ (its `static` folder). */
const SWAGGER_UI_FILES = join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static')

/**
 * How long a browser keeps one of those files before asking again. The URLs do not change with
 * Swagger UI's version, so not `immutable`: after an upgrade a browser may use the old files for up
 * to a day, then revalidates them by ETag (a 304 when unchanged).
 */
const SWAGGER_UI_CACHE = 'public, max-age=86400'

/**
 * Swagger UI formats a JSON answer with JSON.parse + JSON.stringify, which rounds int64 values
 * above 2^53 (the API itself is exact). This plugin, run in the browser, wraps the response body
 * pane: for such answers it indents the text itself (only white space is added outside strings)
 * and shows it as JSON, so every digit stays as the service sent it; the response and its headers
 * pane are left as they came (content-type: application/json). Kept as source text: a compiled
 * function could carry the bundler's helpers into the page.
 */
const EXACT_JSON_PLUGIN = new Function(
  'system',
  `function indent(text) {
    var out = '', depth = 0, inString = false;
    var pad = function (n) { return '\\n' + new Array(n + 1).join('  '); };
    for (var i = 0; i < text.length; i++) {
      var c = text[i];
      if (inString) { out += c; if (c === '\\\\') out += text[++i]; else if (c === '"') inString = false; continue; }
      if (c === '"') { inString = true; out += c; }
      else if (c === '{' || c === '[') { depth++; out += c + pad(depth); }
      else if (c === '}' || c === ']') { depth--; out += pad(depth) + c; }
      else if (c === ',') out += ',' + pad(depth);
      else if (c === ':') out += ': ';
      else if (!/\\s/.test(c)) out += c;
    }
    return out;
  }
  return { wrapComponents: { responseBody: function (Original) {
    return function ExactJsonBody(props) {
      var h = system.React.createElement;
      if (!/json/i.test(props.contentType || '') || typeof props.content !== 'string' || !/\\d{16,}/.test(props.content)) return h(Original, props);
      var Code = system.getComponent('HighlightCode', true);
      return h('div', null, h('h5', null, 'Response body'),
        h(Code, { language: 'json', downloadable: true, fileName: 'response.json', canCopy: true }, indent(props.content)));
    };
  } } };`,
) as (system: unknown) => object

/** The Swagger UI plugins of the page: its default one (the top bar's document loader) and the one above. */
const PLUGINS = [
  new Function('system', 'return SwaggerUIBundle.plugins.DownloadUrl(system);') as (system: unknown) => object,
  EXACT_JSON_PLUGIN,
]

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="220" height="40" viewBox="0 0 220 40"><text x="0" y="28" font-family="sans-serif" font-size="24" font-weight="700" fill="#ffffff">Animal Store API</text></svg>`

/**
 * The page's own policy: Swagger UI's files come from this origin, "Try it out" calls this origin
 * or one of the document's other servers (`apiOrigins`), and no other site may frame it
 * (clickjacking). Styles inline: Swagger UI sets style attributes. No upgrade-insecure-requests: the
 * console must also work on a plain-HTTP address (127.0.0.1); HSTS belongs to the TLS terminator.
 */
function pageHeaders(apiOrigins: readonly string[]) {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        baseUri: ["'self'"],
        connectSrc: ["'self'", ...apiOrigins],
        fontSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        imgSrc: ["'self'", 'data:'],
        objectSrc: ["'none'"],
        scriptSrc: ["'self'"],
        scriptSrcAttr: ["'none'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
      },
    },
    frameguard: { action: 'deny' as const },
    strictTransportSecurity: false,
  }
}

/**
 * The interactive console at /docs. Its routes are public HTML pages (their own CSP, no key).
 * It would also serve the document at /docs/json (and /docs/yaml); one document has one address,
 * so those redirect to `documentPath`, which the page loads and shows; its files (/docs/static/*) are served by staticAssetHandler.
 * An encapsulated plugin: its onRoute hook and the helmet headers reach only the console's routes,
 * never the API's answers.
 */
export async function registerDocsConsole(
  app: FastifyInstance,
  { documentPath, docsPath, apiOrigins }: { documentPath: string; docsPath: string; apiOrigins: readonly string[] },
): Promise<void> {
  const serveAsset = staticAssetHandler({ dir: SWAGGER_UI_FILES, cacheControl: SWAGGER_UI_CACHE })
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: true, page: true }
    if (route.url === `${docsPath}/json` || route.url === `${docsPath}/yaml`) {
      route.handler = async (_request, reply) => reply.redirect(documentPath, 308)
    }
    // Swagger UI serves its files with @fastify/static under fixed options (any path handed to
    // send, max-age=0, no compression); its file route gets this handler instead.
    if (route.url === `${docsPath}/static/*`) route.handler = serveAsset
  })
  await app.register(helmet, pageHeaders(apiOrigins))
  await app.register(swaggerUi, {
    routePrefix: docsPath,
    uiConfig: {
      deepLinking: true,
      docExpansion: 'list',
      persistAuthorization: false,
      // The document's own address in the top bar, not /docs/json (which only redirects to it).
      urls: [{ url: documentPath, name: documentPath }],
      plugins: PLUGINS,
    },
    theme: { title: 'Animal Store API — reference and console' },
    logo: { type: 'image/svg+xml', content: LOGO, href: docsPath, target: '_self' },
    staticCSP: false,
  })
}
