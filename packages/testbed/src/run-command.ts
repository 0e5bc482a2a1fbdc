import { spawn } from 'node:child_process';
import { TestbedError } from './errors.js';

/**
 * Runs a short-lived helper program to its end. Its output is kept only to explain a failure: the tail of
 * it is the message of the {@link TestbedError} (code `COMMAND_FAILED`) a non-zero exit throws.
 */
export async function runToCompletion(command: string, args: readonly string[]): Promise<void> {
  const output: string[] = [];
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) {
    throw new TestbedError(
      'COMMAND_FAILED',
      `${command} exited with ${code}: ${output.join('').slice(-2000)}`,
    );
  }
}
