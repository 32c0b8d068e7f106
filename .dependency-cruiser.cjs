// The layering of docs/architecture.md (and ../shared/STYLE.md), checked by `npm test`:
//   http/ ─▶ services/ ─▶ domain/ ;  jobs/ ─▶ services/ ;  services/ ─▶ store/ ─▶ domain/ ;  schemas/ ─▶ domain/ ;
//   http/ and services/ (the outbox) ─▶ present/ ─▶ domain/, schemas/, store/ (row types)
//   web/ (the server-rendered console) ─▶ services/, schemas/, domain/ and http/'s shared pieces; nothing below imports web/
//   http/ and web/ ─▶ store/ only for types, tenancy.ts (making the scope) and faults.ts: their reads and writes go through services/
// Any of these rules broken fails the build (severity "error").
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'sql-only-in-store',
      comment:
        'SQL lives in store/ only: nothing else imports kysely at run time (its types are fine). query-builder calls on a handle outside store/ are caught by test/unit/sql-only-in-store.test.ts (docs/architecture.md)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/store/' },
      to: { path: 'node_modules/kysely/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'scope-handle-only-in-store',
      comment:
        "a tenant scope's handle is closed to code outside store/: only store files import store/scope-handle.ts (the symbol key and handleOf), type-only imports included; test/unit/scope-stays-closed.test.ts (docs/architecture.md, rule 1)",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/store/' },
      to: { path: '^src/store/scope-handle\\.ts$' },
    },
    {
      name: 'tenancy-minted-in-store',
      comment:
        "only the store mints tenancy: store/scope-mint.ts (forMerchant, the resolved*Id brands, ownedBy) is imported by store files alone, type-only imports included; outside store/ a scope comes from the edge's one function (store/edge-scopes.ts) or a store lookup's owner (docs/architecture.md, Structure II item 1; test/types/tenancy.types.ts)",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/store/' },
      to: { path: '^src/store/scope-mint\\.ts$' },
    },
    {
      name: 'edge-scopes-only-at-the-edge',
      comment:
        "a merchant's scope is made from its number only where a request or command first knows the merchant: store/edge-scopes.ts is imported by the API's token hook (http/auth.ts), the manager's session (web/manager/manager.plugin.ts), the operator's routes and pages (http/routes/admin/, web/console/pages/), the CLI and the demo seed; never by services, jobs, presenters or merchant routes (docs/architecture.md)",
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: '^src/(store/|http/auth\\.ts$|http/routes/admin/|web/manager/manager\\.plugin\\.ts$|web/console/pages/|cli/|demo/)',
      },
      to: { path: '^src/store/edge-scopes\\.ts$' },
    },
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
      name: 'services-not-web',
      comment: 'services/ are use cases shared by the API, the console and the CLI; pages belong to web/',
      severity: 'error',
      from: { path: '^src/services/' },
      to: { path: '^src/web/' },
    },
    {
      name: 'edge-through-services',
      comment:
        'http/ and web/ reach the store through services/: of store/ they import types (rows, Store, Handle, Trx), tenancy.ts and edge-scopes.ts (the edge gets the merchant scope, one function per edge) and faults.ts (which errors are outages), never a repository function, the migrator or db.ts code (docs/architecture.md; docs/decisions.md, "Routes and pages call services, never repositories")',
      severity: 'error',
      from: { path: '^src/(http|web)/' },
      to: { path: '^src/store/', pathNot: '^src/store/(tenancy|edge-scopes|faults)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'http-not-web',
      comment: 'the JSON APIs (http/) do not depend on the web front ends; app.ts wires both',
      severity: 'error',
      from: { path: '^src/(http|jobs)/' },
      to: { path: '^src/web/' },
    },
    {
      name: 'web-not-entry-points',
      comment: 'web/ renders pages from services/; it never reaches the workers, the CLI, start-up or the demo seed',
      severity: 'error',
      from: { path: '^src/web/' },
      to: { path: '^src/(jobs|cli|runtime|demo)/' },
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
      comment: 'present/ turns records into response shapes: it may read domain/, schemas/ (types) and store/ row types, never http/services/jobs/web',
      severity: 'error',
      from: { path: '^src/present/' },
      to: { path: '^src/(http|services|jobs|runtime|cli|demo|web)/' },
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
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
