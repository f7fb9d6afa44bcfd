/**
 * The layers of `src/` and the arrows allowed between them, checked by `npm run check:deps` and
 * by test/unit/dependencies.test.ts (so `npm test` fails on any violation). Type-only imports count.
 *
 *   domain        pure rules and data: imports nothing of the other folders
 *   contract      JSON Schemas and views        → domain
 *   storage       the Store contract, adapters  → domain, contract (never actors, services, cluster)
 *   cluster       leases, members, Redis        → domain, storage contracts, config, observability (never actors)
 *   services      the application services      → domain, contract, storage, handlers, tenancy,
 *                 and their ports (ports.ts)      observability, config (never actors, api, cluster)
 *   actors        the running system            → services/ports, domain, storage, cluster, …
 *   api, client   the REST and actor-message APIs → services, contract, domain, observability,
 *                                                    tenancy and config (api), actors/runtime/typed-ref (client: the
 *                                                    typed actor reference it is reached through)
 *   actors/runtime  the only users of comedy (the actor library)
 *   sdk           what applications import (client, workers) → sdk only, and type-only from contract
 *                 (an app that imports the client loads no fastify, SQLite, actors or server package)
 *   bootstrap.ts  the composition root: may import anything
 */
const other = (...folders) => `^src/(${folders.join('|')})/`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circle anywhere in src/ (type-only imports included).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      comment: 'domain/ imports nothing from the other folders of src/ (nor the root files).',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'api-through-services',
      comment: 'The REST API reaches the rest only through services/ (plus contract, domain, observability, tenancy).',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: [other('actors', 'storage', 'cluster', 'background', 'cli', 'client', 'handlers'), '^src/(bootstrap|main)\\.ts$'] },
    },
    {
      name: 'client-through-services',
      comment: 'The actor-message API reaches the rest only through services/ (plus contract, domain, observability and the typed actor reference).',
      severity: 'error',
      from: { path: '^src/client/' },
      to: {
        path: [other('actors', 'storage', 'cluster', 'background', 'cli', 'api', 'handlers', 'tenancy'), '^src/(bootstrap|main|config)\\.ts$'],
        pathNot: '^src/actors/runtime/typed-ref\\.ts$',
      },
    },
    {
      name: 'services-know-only-ports',
      comment: 'Services reach the actors only through the ports they define (services/ports.ts).',
      severity: 'error',
      from: { path: '^src/services/' },
      to: { path: [other('actors', 'api', 'client', 'cli', 'background', 'cluster'), '^src/(bootstrap|main)\\.ts$'] },
    },
    {
      name: 'storage-knows-no-actors',
      comment: 'storage/ imports no actors, services or cluster code.',
      severity: 'error',
      from: { path: '^src/storage/' },
      to: { path: [other('actors', 'services', 'api', 'client', 'cli', 'background', 'cluster'), '^src/(bootstrap|main)\\.ts$'] },
    },
    {
      name: 'cluster-imports-no-actors',
      comment: 'cluster/ imports no actor files (the actors adapt to it: actors/peers.ts, actors/owner/leased-owners.ts).',
      severity: 'error',
      from: { path: '^src/cluster/' },
      to: { path: [other('actors', 'services', 'api', 'client', 'cli', 'background'), '^src/(bootstrap|main)\\.ts$'] },
    },
    {
      name: 'sdk-stands-alone',
      comment: 'src/sdk/ imports only src/sdk/ and src/contract/ (type-only, see sdk-contract-type-only).',
      severity: 'error',
      from: { path: '^src/sdk/' },
      to: { path: '^src/', pathNot: '^src/(sdk|contract)/' },
    },
    {
      name: 'sdk-contract-type-only',
      comment: 'src/sdk/ takes only types from src/contract/: its schemas and mappers stay on the server.',
      severity: 'error',
      from: { path: '^src/sdk/' },
      to: { path: '^src/contract/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'sdk-no-packages',
      comment: "src/sdk/ uses Node's own modules only: no npm package is loaded by an app that imports the client.",
      severity: 'error',
      from: { path: '^src/sdk/' },
      to: { path: '(^|/)node_modules/' },
    },
    {
      name: 'comedy-behind-runtime',
      comment: 'Only actors/runtime/ uses comedy (the actor library), so it can be replaced there alone.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/actors/runtime/' },
      to: { path: '(^|/)node_modules/comedy/' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
