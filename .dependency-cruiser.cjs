/**
 * The layout rules of docs/architecture.md, checked by `npm test` (npm run lint:deps).
 * Type-only imports are compiled away, so the "at run time" rules ignore them.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const RUNTIME = { dependencyTypesNot: ['type-only'] };

module.exports = {
  forbidden: [
    {
      name: 'no-runtime-cycles',
      severity: 'error',
      comment: 'No import cycle at run time (type-only imports aside).',
      from: { path: '^(src|rest-adapters)/' },
      to: { circular: true, ...RUNTIME, viaOnly: RUNTIME },
    },
    {
      name: 'services-speak-no-transport',
      severity: 'error',
      comment:
        'The domain (src/services) knows no transport: nothing from src/schema, src/graphql, rest-adapters, Hono or Yoga.',
      from: { path: '^src/services/' },
      to: {
        path: [
          '^src/(schema|graphql)/',
          '^rest-adapters/',
          '^src/(app|deps|jobs|main)\\.ts$',
          '(^|/)node_modules/(hono|@hono/[^/]+|graphql-yoga|@graphql-yoga/[^/]+|@pothos/[^/]+|graphql-ws)/',
        ],
      },
    },
    {
      name: 'modules-meet-through-index',
      severity: 'error',
      comment:
        "A domain module is reached from outside only through its index.ts (its public face); inside a module, files import each other directly.",
      from: { path: '^src/services/([^/]+)/' },
      to: { path: '^src/services/([^/]+)/', pathNot: ['^src/services/$1/', '^src/services/[^/]+/index\\.ts$'] },
    },
    {
      name: 'surfaces-meet-modules-through-index',
      severity: 'error',
      comment: 'Code outside src/services reaches a domain module only through its index.ts.',
      from: { path: '^(src|rest-adapters|bench|scripts)/', pathNot: '^src/services/' },
      to: { path: '^src/services/', pathNot: '^src/services/[^/]+/index\\.ts$' },
    },
    {
      name: 'infrastructure-imports-only-the-kernel',
      severity: 'error',
      comment:
        'src/upstream, src/events, src/db, src/telemetry and src/config.ts (with its value forms, src/configValues.ts) import at run time only services/kernel (and their own folder); type-only imports such as Config are allowed.',
      from: { path: '^src/(upstream|events|db|telemetry)/|^src/config(Values)?\\.ts$' },
      to: {
        ...RUNTIME,
        path: '^(src|rest-adapters)/',
        pathNot: ['^src/services/kernel/', '^src/generated/', '^src/$1/', '^src/configValues\\.ts$'],
      },
    },
    {
      name: 'clients-stand-alone',
      severity: 'error',
      comment:
        'The generated clients (clients/, docs/client.md) are for partners: they import nothing of the service, its tests or scripts (only their own files and their libraries).',
      from: { path: '^clients/' },
      to: { path: '^(src|rest-adapters|test|scripts|bench)/' },
    },
    {
      name: 'metrics-imports-only-the-kernel',
      severity: 'error',
      comment:
        'src/metrics imports at run time only services/kernel and its own folder (and prom-client): what it reads of the service comes through the observer interfaces the other modules declare and through watch(); type-only imports are allowed.',
      from: { path: '^src/metrics/' },
      to: { ...RUNTIME, path: '^(src|rest-adapters)/', pathNot: ['^src/services/kernel/', '^src/metrics/'] },
    },
    {
      name: 'services-record-no-metrics',
      severity: 'error',
      comment: 'The domain does not import src/metrics at run time: a service that reports something takes an observer (as WebhookSender does).',
      from: { path: '^src/services/' },
      to: { ...RUNTIME, path: '^src/metrics/' },
    },
    {
      name: 'prisma-client-only-in-services-and-db',
      severity: 'error',
      comment: 'The generated Prisma client is imported only from src/services and src/db.',
      from: { path: '^(src|rest-adapters)/', pathNot: ['^src/services/', '^src/db/', '^src/generated/'] },
      to: { path: '^src/generated/' },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', '^src/generated/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
