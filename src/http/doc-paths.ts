/** Where the public API's OpenAPI document and its interactive console are served (the docs console, GET /, the banner). */
export const OPENAPI_PATH = '/v1/openapi.json'
export const DOCS_PATH = '/docs'
