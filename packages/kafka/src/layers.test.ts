// The package's layers, checked on its import graph: a file imports only files of its own layer or of a
// lower one (shared leaves -> protocol -> network -> api -> facade -> index), no import cycles, and the
// test kit under testing/ is never imported by production code.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

const LAYERS = ['leaf', 'protocol', 'network', 'api', 'facade', 'index'] as const;
type Layer = (typeof LAYERS)[number];

function layerOf(file: string): Layer {
  if (file === 'index.ts') return 'index';
  if (file === 'kafka-adapter.ts') return 'facade';
  const top = file.split('/')[0];
  if (top === 'protocol' || top === 'network' || top === 'api') return top;
  if (!file.includes('/')) return 'leaf';
  throw new Error(`${file} is in no layer`);
}

/** Production source files, relative to src/ with forward slashes. */
function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sourceFiles(path);
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) return [];
    return [relative(SRC, path).split('\\').join('/')];
  });
}

/** The package files `file` imports (relative imports only), as paths relative to src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  const specifiers = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/gms)];
  return specifiers.map((m) =>
    posix.normalize(posix.join(posix.dirname(file), m[1]!)).replace(/\.js$/, '.ts'),
  );
}

const graph = new Map(sourceFiles().map((file) => [file, importsOf(file)]));

describe('the layers of @offsetsync/kafka', () => {
  it('import only from their own layer or a lower one', () => {
    const upward: string[] = [];
    for (const [file, imports] of graph) {
      for (const imported of imports) {
        if (LAYERS.indexOf(layerOf(imported)) > LAYERS.indexOf(layerOf(file))) {
          upward.push(`${file} -> ${imported}`);
        }
      }
    }
    expect(upward).toEqual([]);
  });

  it('have no import cycles', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const imported of graph.get(file) ?? []) visit(imported, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('never import the test kit, and import only files that exist', () => {
    const imported = [...graph.values()].flat();
    expect(imported.filter((file) => file.startsWith('testing/'))).toEqual([]);
    expect(imported.filter((file) => !graph.has(file))).toEqual([]);
  });
});
