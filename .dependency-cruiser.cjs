/**
 * The layering of src/, checked by `npm run lint` (depcruise src). From the top:
 *   wiring (app.ts, server.ts, cluster.ts, cli.ts, cli/) -> APIs (pets/, admin/)
 *   -> features (auth/, keys/, limits/) -> http/ (Fastify plumbing) -> ops/ (metrics, health)
 *   -> shared/ (the ground floor)
 * and the stores (storage/) implement the features' interfaces; only the wiring picks a store.
 * Files directly in src/ (config.ts, logger.ts, …) are not in a folder, so the folder rules do not see them.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
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
        'tested or replaced on its own; scope "folder" checks the graph of folders, not of modules.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A module nothing imports is dead code, or an entry point that should be listed here.',
      from: {
        orphan: true,
        pathNot: ['\\.d\\.ts$', '^src/(cli|npm-start|server|cluster)\\.ts$'],
      },
      to: {},
    },
    {
      name: 'storage-only-from-wiring',
      severity: 'error',
      comment:
        'Features depend on their repository interfaces (pets/repository.ts, keys/repository.ts, …), never on a store: ' +
        'which engine runs is decided once, by the wiring (DATABASE_URL in storage/index.ts).',
      from: { path: '^src/', pathNot: '^src/(app|service|server|cluster|cli)\\.ts$|^src/(cli|storage)/' },
      to: { path: '^src/storage/' },
    },
    {
      name: 'shared-is-the-ground-floor',
      severity: 'error',
      comment:
        'shared/ holds the facts every layer uses (quotas, the error type, int64, clock, drain, outages): it imports no other folder.',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'http-is-framework-plumbing',
      severity: 'error',
      comment:
        'http/ is what any Fastify service has (body parsing, validation, errors, routing fallbacks, docs console); ' +
        'it knows no feature, so a feature can use it without a cycle.',
      from: { path: '^src/http/' },
      to: { path: '^src/(auth|keys|limits|pets|admin|storage|cli)/' },
    },
    {
      name: 'ops-on-the-ground-floor',
      severity: 'error',
      comment:
        'Metrics and health are counted by every layer (http, auth, limits, admin): ops/ itself checks any dependency by its ping, knowing none.',
      from: { path: '^src/ops/' },
      to: { path: '^src/', pathNot: '^src/(ops|shared)/|^src/version\\.ts$' },
    },
    {
      name: 'features-below-apis',
      severity: 'error',
      comment: 'The features (auth, keys, limits, usage) serve the APIs (pets, admin) and the CLI; they never import them.',
      from: { path: '^src/(auth|keys|limits|usage)/' },
      to: { path: '^src/(pets|admin|cli)/|^src/(app|server|cluster|cli)\\.ts$' },
    },
    {
      name: 'no-wiring-from-below',
      severity: 'error',
      comment: 'app.ts, service.ts, server.ts, cluster.ts and cli/ assemble everything; nothing below them imports them.',
      from: { path: '^src/', pathNot: '^src/(app|service|server|cluster|cli|npm-start)\\.ts$|^src/cli/' },
      to: { path: '^src/(app|service|server|cluster|cli)\\.ts$|^src/cli/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
}
