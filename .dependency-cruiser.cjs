/**
 * The import rules `npm run lint` checks (dependency-cruiser), type-only imports included: a circle of
 * types is still a circle a reader walks. See docs/architecture.md#how-a-service-reads.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No module reaches itself through its imports (types included).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'services-share-only-the-library',
      severity: 'error',
      comment: 'A service reaches another only through its proto; in code it imports its own folder and services/shared.',
      from: { path: '^services/([^/]+)/' },
      to: { path: '^services/', pathNot: ['^services/$1/', '^services/shared/'] },
    },
    {
      name: 'shared-imports-no-service',
      severity: 'error',
      from: { path: '^services/shared/' },
      to: { path: '^services/(?!shared/)' },
    },
    {
      name: 'stateless-services-load-no-database-layer',
      severity: 'error',
      comment:
        'The gateway and realtime keep no data: they import the library through @rundown/shared/core, never its index, db.ts or the outbox writer (TypeORM and pg were a fifth of their start-up).',
      from: { path: '^services/(gateway|realtime)/' },
      to: { path: '^services/shared/src/(index|db)\\.ts$|^services/shared/src/outbox/outbox\\.ts$' },
    },
    {
      name: 'library-core-loads-no-database-layer',
      severity: 'error',
      comment: 'What @rundown/shared/core reaches leaves the database layer (TypeORM, pg) to db.ts and the outbox writer (types aside).',
      from: { path: '^services/shared/src/', pathNot: '^services/shared/src/(index|db)\\.ts$|^services/shared/src/outbox/outbox\\.ts$|\\.test\\.ts$' },
      to: {
        path: '^services/shared/src/(index|db)\\.ts$|^services/shared/src/outbox/outbox\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'migrations-load-only-migrations',
      severity: 'error',
      comment: 'The launcher loads every service\'s migrations to see which are pending: they import each other and the outbox\'s migrations (@rundown/shared/outbox-migrations) alone.',
      from: { path: '^services/[^/]+/src/migrations/', pathNot: '\\.test\\.ts$' },
      to: { path: '^services/', pathNot: ['^services/[^/]+/src/migrations/', '^services/shared/src/outbox/migration\\.ts$'] },
    },
    {
      name: 'domain-and-repositories-import-nothing-above',
      severity: 'error',
      comment: 'The layers run down: main -> app/wiring -> grpc (http, socket), clients, events, jobs -> domain -> repositories; nothing below imports what is above it.',
      from: { path: '^services/[^/]+/src/(domain|repositories)/' },
      to: { path: '^services/[^/]+/src/(main|app|wiring|config)\\.ts$|^services/[^/]+/src/(grpc|http|socket|clients|events|jobs)/' },
    },
    {
      name: 'gateway-route-files-import-no-route-file',
      severity: 'error',
      comment:
        'A route file (http/v1/*, http/admin/routes.ts, http/v0/router.ts) maps HTTP to gRPC for its resources alone; what two of them share (schemas, request and record mappers) lives in wire/.',
      from: { path: '^services/gateway/src/http/(v1/(?!index\\.ts$)[^/]+|admin/routes|v0/router)\\.ts$', pathNot: '\\.test\\.ts$' },
      to: { path: '^services/gateway/src/http/(v1/(?!index\\.ts$)[^/]+|admin/routes|v0/router)\\.ts$' },
    },
    {
      name: 'gateway-layers-run-down',
      severity: 'error',
      comment:
        'The gateway runs down: app -> http (listeners, router, route files, MCP) -> events, transfer -> read-models -> edge -> wire (services/gateway/README.md); nothing imports a folder above its own.',
      from: { path: '^services/gateway/src/(events|transfer|read-models|edge|wire)/' },
      to: { path: '^services/gateway/src/(app|main)\\.ts$|^services/gateway/src/http/' },
    },
    {
      name: 'gateway-read-models-edge-and-wire-below-events',
      severity: 'error',
      from: { path: '^services/gateway/src/(read-models|edge|wire)/' },
      to: { path: '^services/gateway/src/(events|transfer)/' },
    },
    {
      name: 'gateway-edge-and-wire-below-read-models',
      severity: 'error',
      from: { path: '^services/gateway/src/(edge|wire)/' },
      to: { path: '^services/gateway/src/read-models/' },
    },
    {
      name: 'gateway-wire-imports-only-wire',
      severity: 'error',
      comment: 'wire/ is the bottom of the gateway: the JSON it speaks, the same for every layer that speaks it.',
      from: { path: '^services/gateway/src/wire/' },
      to: { path: '^services/gateway/src/(?!wire/)' },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    exclude: { path: ['(^|/)dist/', '(^|/)node_modules/', '^\\.data/', '^charts/', '^coverage/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['source', 'import', 'types', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.json'],
    },
    combinedDependencies: false,
  },
};
