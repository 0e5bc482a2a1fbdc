// dependency-cruiser (`npm run lint`): the import rules the layout stands for. Workspace package names
// (@offsetsync/*) resolve through tsconfig.json's `paths` to their sources, so an import of a package is
// seen as an import of its src/ files, not of a build in dist/.
const SERVICES = '(collector|translator|committer|health)';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included (house style).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'services-stay-apart',
      severity: 'error',
      comment:
        'A service never imports another service, by path or by package name; what they share is a package.',
      from: { path: `^services/${SERVICES}/` },
      to: {
        path: [`^services/${SERVICES}/`, `^@offsetsync/${SERVICES}($|/)`],
        pathNot: ['^services/$1/', '^@offsetsync/$1($|/)'],
      },
    },
    {
      name: 'contracts-stand-alone',
      severity: 'error',
      comment: 'packages/contracts (the wire and the event envelope) imports no other workspace package.',
      from: { path: '^packages/contracts/' },
      to: {
        path: ['^(packages|services|cli|bench|test|scripts)/', '^@offsetsync/'],
        pathNot: '^packages/contracts/',
      },
    },
    {
      name: 'packages-below-services',
      severity: 'error',
      comment: 'No package under packages/ imports a service or the CLI.',
      from: { path: '^packages/' },
      to: { path: ['^(services|cli)/', `^@offsetsync/(${SERVICES.slice(1, -1)}|cli)($|/)`] },
    },
    {
      name: 'bench-not-from-test',
      severity: 'error',
      comment: 'Benchmarks import what they share with the tests from @offsetsync/harness, never from test/.',
      from: { path: '^bench/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|\\.infra|coverage)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    // Resolve as TypeScript does under NodeNext: the `import` condition of package exports, `.js` imports
    // of `.ts` sources.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.json'],
    },
  },
};
