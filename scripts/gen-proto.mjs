#!/usr/bin/env node
// Lints the contracts in proto/ and regenerates their TypeScript (see buf.gen.yaml).
//
//   node scripts/gen-proto.mjs              replace packages/contracts/src/gen
//   node scripts/gen-proto.mjs --out <dir>  write the same files to <dir>, which must be missing or empty
//                                           (the drift test generates into a temporary directory this way)
//
// buf writes into a fresh staging directory first; the destination is replaced only once generation has
// succeeded, so a failed run never leaves the committed output half deleted. Replacing the whole directory
// also removes the output of .proto files that no longer exist. The output is not formatted: it is
// prettier-ignored and must be byte-for-byte what the plugin emits, so that drift checks are exact.
// Exits non-zero, with a message on stderr, when linting or generation fails.
import { spawnSync } from 'node:child_process';
import console from 'node:console';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import process from 'node:process';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// Must equal the plugin's `out` in buf.gen.yaml.
const GEN_DIR = join('packages', 'contracts', 'src', 'gen');
// The npm package's entry point is a Node script; running it with this Node avoids depending on PATH.
const BUF = join(repoRoot, 'node_modules', '@bufbuild', 'buf', 'bin', 'buf');

class GenError extends Error {}

function parseOptions(argv) {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { out: { type: 'string' } }, strict: true }));
  } catch (err) {
    throw new GenError(
      `${err instanceof Error ? err.message : String(err)}\nusage: node scripts/gen-proto.mjs [--out <dir>]`,
    );
  }
  if (values.out === '') throw new GenError('--out needs a directory');
  return values.out === undefined
    ? { out: join(repoRoot, GEN_DIR), custom: false }
    : { out: resolve(values.out), custom: true };
}

function runBuf(args) {
  const result = spawnSync(process.execPath, [BUF, ...args], { cwd: repoRoot, stdio: 'inherit' });
  if (result.error) throw new GenError(`could not run buf ${args[0]}: ${result.error.message}`);
  if (result.status !== 0) {
    const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.status}`;
    throw new GenError(`buf ${args[0]} ${how}`);
  }
}

// The default destination is replaced wholesale. A directory given with --out must be missing or empty, so a
// mistyped path can never delete unrelated files.
function assertUsableOut(out) {
  if (!existsSync(out)) return;
  if (!statSync(out).isDirectory() || readdirSync(out).length > 0) {
    throw new GenError(`--out ${out} must be a missing or empty directory`);
  }
}

function main() {
  const { out, custom } = parseOptions(process.argv.slice(2));
  if (custom) assertUsableOut(out);
  if (!existsSync(BUF)) throw new GenError(`buf is not installed (${BUF} is missing); run npm ci first`);

  runBuf(['lint']);

  const staging = mkdtempSync(join(tmpdir(), 'offsetsync-gen-'));
  try {
    runBuf(['generate', '--output', staging]);
    const generated = join(staging, GEN_DIR);
    if (!existsSync(generated)) {
      throw new GenError(
        `buf generate wrote nothing to ${GEN_DIR}; does the plugin's out in buf.gen.yaml still match?`,
      );
    }
    rmSync(out, { recursive: true, force: true });
    cpSync(generated, out, { recursive: true });
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  console.log(`generated TypeScript from proto/ into ${relative(process.cwd(), out) || '.'}`);
}

try {
  main();
} catch (err) {
  const message =
    err instanceof GenError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  console.error(`gen-proto failed: ${message}`);
  process.exitCode = 1;
}
