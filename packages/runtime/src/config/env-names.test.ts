import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIG_FILE_ENV, ENV_PREFIX, SEPARATOR, TOOL_ENV_VARIABLES } from './env-names.js';
import { readEnvOverrides, resolveEnvName } from './env-overrides.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** Where the project's code lives: services, CLI, shared packages, tests, test bed, benchmarks, scripts. */
const CODE_FOLDERS = ['packages', 'services', 'cli', 'test', 'bench', 'scripts'];

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory())
      return ['node_modules', 'dist', 'gen'].includes(entry.name) ? [] : sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/** Every `OFFSETSYNC_*` name the code reads from an environment (`env.X`, `env['X']`, `process.env.X`). */
function variablesReadByTheCode(): Map<string, string> {
  const read = new Map<string, string>();
  for (const file of CODE_FOLDERS.flatMap((folder) => sourceFiles(join(REPO_ROOT, folder)))) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\benv(?:\.|\[\s*['"`])(OFFSETSYNC_[A-Z0-9_]+)/g)) {
      read.set(match[1] ?? '', file.slice(REPO_ROOT.length));
    }
  }
  return read;
}

describe('TOOL_ENV_VARIABLES', () => {
  it('lists every OFFSETSYNC_* variable the repository reads that is not a setting', () => {
    const read = variablesReadByTheCode();
    // The scan finds the test bed's variables at least; a scan that finds nothing proves nothing.
    expect([...read.keys()]).toContain('OFFSETSYNC_TESTBED_FILE');
    for (const [name, file] of read) {
      const known = name === CONFIG_FILE_ENV || name in TOOL_ENV_VARIABLES || resolveEnvName(name).ok;
      expect(known, `${name} (read in ${file}) is neither a setting nor in TOOL_ENV_VARIABLES`).toBe(true);
    }
  });

  it('holds no name that is or could be a setting: each names none and has no __ separator', () => {
    for (const name of Object.keys(TOOL_ENV_VARIABLES)) {
      expect(name.startsWith(ENV_PREFIX)).toBe(true);
      expect(name).not.toContain(SEPARATOR);
      expect(resolveEnvName(name).ok, name).toBe(false);
    }
  });

  it('is the list docs/configuration.md gives (its hand-written part is in scripts/gen-config-docs.ts)', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'configuration.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### Variables with the prefix that are not settings'));
    for (const name of Object.keys(TOOL_ENV_VARIABLES)) expect(section).toContain(`\`${name}\``);
  });

  it('is skipped by the loader, where the same names with a typo are reported', () => {
    const tools = Object.fromEntries(Object.keys(TOOL_ENV_VARIABLES).map((name) => [name, 'reuse']));
    expect(readEnvOverrides(tools)).toEqual({
      overrides: [],
      problems: [],
      ignored: Object.keys(TOOL_ENV_VARIABLES)
        .sort()
        .map((name) => ({ name, kind: 'tool', about: TOOL_ENV_VARIABLES[name] })),
    });
    const typos = { OFFSETSYNC_TESTBEDS: 'reuse', OFFSETSYNC_TESTBED_FILES: 'x' };
    expect(readEnvOverrides(typos).problems.map((p) => p.path)).toEqual([
      'env:OFFSETSYNC_TESTBEDS',
      'env:OFFSETSYNC_TESTBED_FILES',
    ]);
  });
});
