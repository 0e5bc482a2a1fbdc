// Secrets mounted as files (Kubernetes Secret volumes): read when a connection authenticates, not once at
// start, so that a corrected or rotated secret is picked up without a restart.
import { readFileSync } from 'node:fs';

/**
 * The secret in `path`, without the line ending an editor or `kubectl create secret --from-file` may leave
 * at its end (a password cannot end with a newline in any of the servers offsetsync talks to). Throws the
 * file system's error when the file cannot be read.
 */
export function readSecretFile(path: string): string {
  return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
}
