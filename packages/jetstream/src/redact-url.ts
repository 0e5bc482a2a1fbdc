/**
 * A server URL fit for logs: credentials written into it (`nats://user:secret@host:4222`,
 * `nats://token@host:4222`) become `***`. Anything that is not a URL with credentials comes back unchanged.
 */
export function redactUrlCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/i, '$1***@');
}
