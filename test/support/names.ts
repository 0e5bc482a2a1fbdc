import { randomBytes } from 'node:crypto';

/** A name no other test (or earlier run against the same servers) uses: `<base>-<random>`. */
export function uniqueName(base: string): string {
  return `${base}-${randomBytes(4).toString('hex')}`;
}
