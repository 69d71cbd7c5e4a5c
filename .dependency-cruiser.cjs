/**
 * The layering of src/, checked by `npm run lint` (depcruise src console). Every file is in a layer; from the top:
 *   wiring: the entry points and the composition root (app.ts, domain.ts, service.ts, server.ts, cli.ts, the
 *           only files directly in src/), the background jobs' owner (daemon/), the command line (cli/) and
 *           the process lifecycle (lifecycle/)
 *   -> APIs (api/: the public API, /v1; admin/: the admin API) -> features (pets/, orders/, idempotency/,
 *      keys/, customers/, auth/, limits/, usage/, admin-tokens/, secret-scanning/, changes/, webhooks/, events/)
 *   -> http/ (Fastify plumbing) -> ops/ (metrics, health, the logger) -> config/ (the configuration)
 *   -> shared/ (the ground floor)
 * and the stores (storage/) implement the features' interfaces; only the wiring picks a store.
 * Each API is cut by resource (api/pets/, api/orders/, …; admin/keys/, admin/usage/, …), one file per
 * operation, each resource on its API's common/ only; no API imports the other. The guard
 * (auth/guard.ts) is handed its credential kinds (API keys, admin tokens).
 * @type {import('dependency-cruiser').IConfiguration}
 */

/**
 * The layers, top to bottom, as one table: every folder of src/ is in exactly one, and a file in a
 * folder that no layer names fails lint (every-file-in-a-layer), so a new folder is placed before
 * it is merged. The rules below say what each layer may import.
 */
const LAYERS = {
  /** The entry points and the composition root (the five files directly in src/), daemon/, cli/ and lifecycle/. */
  wiring: '^src/[^/]+\\.ts$|^src/(daemon|cli|lifecycle)/',
  /** Each registers its routes, schemas and OpenAPI document. */
  apis: '^src/(api|admin)/',
  /** Rules, use cases, repository interfaces and resource schemas, used by the APIs, the CLI and the stores. */
  features: '^src/(pets|orders|idempotency|keys|customers|auth|limits|usage|admin-tokens|secret-scanning|changes|webhooks|events)/',
  framework: '^src/http/',
  observability: '^src/ops/',
  configuration: '^src/config/',
  groundFloor: '^src/shared/',
  /** One implementation each of the features' repository interfaces; only the wiring picks one. */
  stores: '^src/storage/',
}
const WIRING = LAYERS.wiring
const APIS = LAYERS.apis
const FEATURES = LAYERS.features
const IN_A_LAYER = Object.values(LAYERS)

/**
 * What the console (browser code, bundled apart) may take from src/: modules that import nothing,
 * so that the bundle holds no server code.
 */
const FOR_THE_CONSOLE = '^src/(shared/scopes|webhooks/event-types|events/event-types|changes/audit-actions)\\.ts$'

module.exports = {
  forbidden: [
    {
      name: 'every-file-in-a-layer',
      severity: 'error',
      comment:
        'Every file of src/ is in a folder of the layer table (LAYERS above): a new folder is placed in a layer, and so seen by the rules, before it is merged.',
      from: { path: '^src/', pathNot: IN_A_LAYER },
      to: {},
    },
    {
      name: 'every-import-in-a-layer',
      severity: 'error',
      comment: 'The same, seen from the importing side: a file that imports nothing is still found when something imports it.',
      from: {},
      to: { path: '^src/', pathNot: IN_A_LAYER },
    },
    {
      name: 'console-takes-only-dependency-free-modules',
      severity: 'error',
      comment:
        'The console is browser code: from src/ it takes only modules that import nothing (the scopes, the event types, the audit actions), ' +
        'so its bundle never pulls in the server.',
      from: { path: '^console/' },
      to: { path: '^src/', pathNot: FOR_THE_CONSOLE },
    },
    {
      name: 'console-modules-import-nothing',
      severity: 'error',
      comment:
        'What the console takes from src/ imports nothing else (see console-takes-only-dependency-free-modules): ' +
        'only one another (the webhook event types are the event log’s list).',
      from: { path: FOR_THE_CONSOLE },
      to: { pathNot: FOR_THE_CONSOLE },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module cycle makes the load order matter and hides which module owns a decision.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      severity: 'error',
      scope: 'folder',
      comment:
        'Folders depend one way. A cycle between folders (keys -> limits -> keys) means no folder can be read, ' +
        'tested or replaced on its own; scope "folder" checks the graph of folders, not of modules. src/ itself ' +
        '(the entry points) is a folder too: no folder below imports it (no-wiring-from-below).',
      from: { path: '^src' },
      to: { circular: true },
    },
    {
      name: 'only-entry-points-at-the-root',
      severity: 'error',
      comment:
        'Directly in src/ are the entry points and the composition root only (app, domain, service, server, cli), so that ' +
        'src/ shows the architecture at a glance and every other file is in a folder that a rule below sees.',
      from: { path: '^src/[^/]+\\.ts$', pathNot: '^src/(app|domain|service|server|cli)\\.ts$' },
      to: {},
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A module nothing imports is dead code, or an entry point that should be listed here.',
      from: {
        orphan: true,
        pathNot: ['\\.d\\.ts$', '^src/(cli|server)\\.ts$'],
      },
      to: {},
    },
    {
      name: 'storage-only-from-wiring',
      severity: 'error',
      comment:
        'Features depend on their repository interfaces (pets/repository.ts, keys/repository.ts, …), never on a store: ' +
        'which engine runs is decided once, by the wiring (DATABASE_URL in storage/index.ts).',
      from: { path: '^src/', pathNot: `${WIRING}|^src/storage/` },
      to: { path: '^src/storage/' },
    },
    {
      name: 'shared-is-the-ground-floor',
      severity: 'error',
      comment:
        'shared/ holds the facts every layer uses (quotas, the error types, int64, clock, drain, outages, file modes): ' +
        'it imports no other folder.',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'config-above-shared-only',
      severity: 'error',
      comment:
        'config/ reads and checks the environment for everyone (variables, the config file, Redis URLs); it knows no ' +
        'feature, so any layer can read its Config.',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(config|shared)/' },
    },
    {
      name: 'ops-on-the-ground-floor',
      severity: 'error',
      comment:
        'Metrics, health and the logger are used by every layer (http, auth, limits, admin): ops/ itself checks any ' +
        'dependency by its ping, knowing none.',
      from: { path: '^src/ops/' },
      to: { path: '^src/', pathNot: '^src/(ops|config|shared)/' },
    },
    {
      name: 'http-is-framework-plumbing',
      severity: 'error',
      comment:
        'http/ is what any Fastify service has (body parsing, validation, errors, routing fallbacks, docs console); ' +
        'it knows no feature, so a feature can use it without a cycle.',
      from: { path: '^src/http/' },
      to: { path: [FEATURES, APIS, '^src/(storage|daemon|cli|lifecycle)/'] },
    },
    {
      name: 'features-below-apis',
      severity: 'error',
      comment:
        'The features (pets, orders, idempotency, keys, customers, auth, limits, usage, admin-tokens, secret-scanning, changes, webhooks, events) ' +
        'serve the APIs (api, admin) and the CLI; they never import them: the rules live in the domain, and storage and ' +
        'the CLI use them without an API. A feature may use another (orders use pets and idempotency), without a cycle.',
      from: { path: FEATURES },
      to: { path: APIS },
    },
    {
      name: 'no-api-imports-another',
      severity: 'error',
      comment:
        'The public API (api/, /v1) and the admin API (admin/, /admin/v1) are two adapters over the same features: ' +
        'what both need is a feature (an order id parameter, a view of a record), never one API reading the other.',
      from: { path: '^src/(api|admin)/' },
      to: { path: APIS, pathNot: '^src/$1/' },
    },
    {
      name: 'api-resources-apart',
      severity: 'error',
      comment:
        'The public API is cut by resource (api/pets/, api/orders/, api/rate-limit/, api/secret-scanning/), one file per ' +
        'operation: a resource imports its own folder, what they share (api/common/) and the features, never another ' +
        'resource nor api/index.ts, which registers them.',
      from: { path: '^src/api/([^/]+)/', pathNot: '^src/api/common/' },
      to: { path: '^src/api/', pathNot: '^src/api/($1|common)/' },
    },
    {
      name: 'api-common-below-resources',
      severity: 'error',
      comment: "api/common/ is what the public API's resources share (the prefix, refs, paging, links): it knows none of them.",
      from: { path: '^src/api/common/' },
      to: { path: '^src/api/', pathNot: '^src/api/common/' },
    },
    {
      name: 'admin-resources-apart',
      severity: 'error',
      comment:
        'The admin API is cut by resource (admin/keys/, admin/usage/, admin/audit/): a resource imports its own folder, ' +
        'what they share (admin/common/) and the features, never another resource nor admin/index.ts, which registers them.',
      from: { path: '^src/admin/([^/]+)/', pathNot: '^src/admin/common/' },
      to: { path: '^src/admin/', pathNot: '^src/admin/($1|common)/' },
    },
    {
      name: 'admin-common-below-resources',
      severity: 'error',
      comment: 'admin/common/ is what the admin resources share (errors, links, schemas, times): it knows none of them.',
      from: { path: '^src/admin/common/' },
      to: { path: '^src/admin/', pathNot: '^src/admin/common/' },
    },
    {
      name: 'guard-is-given-its-credentials',
      severity: 'error',
      comment:
        'One guard for every route (auth/guard.ts): the credential kinds (auth/api-key-credential.ts, ' +
        'admin-tokens/admin-token-credential.ts) are handed to it by the wiring, so that it knows neither kind and no ' +
        'guard calls another.',
      from: { path: '^src/auth/(guard|credential)\\.ts$' },
      to: { path: '^src/(keys|admin-tokens)/' },
    },
    {
      name: 'no-wiring-from-below',
      severity: 'error',
      comment:
        'The entry points, the composition root, daemon/, cli/ and lifecycle/ assemble everything; nothing below them imports ' +
        'them (a lifecycle function that needs the server start is handed it by an entry point).',
      from: { path: '^src/', pathNot: WIRING },
      to: { path: WIRING },
    },
    {
      name: 'lifecycle-below-the-entry-points',
      severity: 'error',
      comment:
        'lifecycle/ (start banner, cluster, start failures) is used by the entry points and the command line; it ' +
        'imports neither, so that the root stays the top of the graph.',
      from: { path: '^src/lifecycle/' },
      to: { path: '^src/[^/]+\\.ts$|^src/cli/' },
    },
    {
      name: 'daemon-below-the-entry-points',
      severity: 'error',
      comment:
        'daemon/ owns the background jobs (it starts and stops them; their rules stay in their features); the ' +
        'composition root (domain.ts) builds it and hands it its parts, so it imports no root file and no other wiring.',
      from: { path: '^src/daemon/' },
      to: { path: '^src/[^/]+\\.ts$|^src/(cli|lifecycle)/' },
    },
    {
      name: 'cli-below-the-entry-points',
      severity: 'error',
      comment: 'cli/ holds the commands; src/cli.ts dispatches them and hands in what only an entry point may import.',
      from: { path: '^src/cli/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
}
