import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const committedDir = join(repoRoot, 'packages', 'contracts', 'src', 'gen');
const HOW_TO_FIX =
  'the generated code under packages/contracts/src/gen is out of date: run npm run gen and commit';

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

describe('generated protobuf code', () => {
  it('matches a fresh generation from proto/ byte for byte', { timeout: 30_000 }, async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'offsetsync-gen-check-'));
    onTestFinished(() => rm(scratch, { recursive: true, force: true }));
    const freshDir = join(scratch, 'gen');

    try {
      await run(process.execPath, [join(repoRoot, 'scripts', 'gen-proto.mjs'), '--out', freshDir], {
        cwd: repoRoot,
      });
    } catch (err: unknown) {
      const stderr = (err as { stderr?: unknown }).stderr;
      throw new Error(`scripts/gen-proto.mjs failed:\n${typeof stderr === 'string' ? stderr : String(err)}`, {
        cause: err,
      });
    }

    const fresh = await listFiles(freshDir);
    const committed = await listFiles(committedDir);
    expect(fresh.length, 'generation produced no files').toBeGreaterThan(0);

    const drift: string[] = [];
    for (const file of fresh)
      if (!committed.includes(file)) drift.push(`generated but not committed: ${file}`);
    for (const file of committed)
      if (!fresh.includes(file)) drift.push(`committed but no longer generated: ${file}`);
    for (const file of fresh.filter((f) => committed.includes(f))) {
      const [a, b] = await Promise.all([readFile(join(freshDir, file)), readFile(join(committedDir, file))]);
      if (!a.equals(b)) drift.push(`content differs: ${file}`);
    }
    expect(drift, HOW_TO_FIX).toEqual([]);
  });
});
