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
