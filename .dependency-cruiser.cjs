// The layering of docs/architecture.md (and ../shared/STYLE.md), checked by `npm test`:
//   http/ ─▶ services/ ─▶ domain/ ;  jobs/ ─▶ services/ ;  services/ ─▶ store/ ─▶ domain/ ;  schemas/ ─▶ domain/ ;
//   http/ and services/ (the outbox) ─▶ present/ ─▶ domain/, schemas/, store/ (row types)
// Any of these rules broken fails the build (severity "error").
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'domain/ holds the rules and the vocabulary: it imports nothing of ours but domain/ (no store, schemas, http, config)',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'store-imports-only-domain',
      comment: 'store/ (repositories, migrations) may import domain/ and itself, never services/http/schemas/jobs/config',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/', pathNot: '^src/(store|domain)/' },
    },
    {
      name: 'services-not-http',
      comment: 'services/ are use cases; presenting and parsing requests belong to http/ (or present/)',
      severity: 'error',
      from: { path: '^src/services/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'jobs-not-http',
      comment: 'workers call services, never http/',
      severity: 'error',
      from: { path: '^src/jobs/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'schemas-only-domain',
      comment: 'schemas/ (TypeBox payloads) may import domain/ and themselves only',
      severity: 'error',
      from: { path: '^src/schemas/' },
      to: { path: '^src/', pathNot: '^src/(schemas|domain)/' },
    },
    {
      name: 'present-is-a-leaf',
      comment: 'present/ turns records into response shapes: it may read domain/, schemas/ (types) and store/ row types, never http/services/jobs',
      severity: 'error',
      from: { path: '^src/present/' },
      to: { path: '^src/(http|services|jobs|runtime|cli|demo)/' },
    },
    {
      name: 'no-cycles',
      comment: 'no module may reach itself through its imports',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
