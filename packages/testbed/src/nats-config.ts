// The nats-server configuration file of the secured bed: TLS with the bed's certificate, JetStream, and
// users with their permissions. Passwords and subjects come from callers, so every string is written
// quoted with only the escapes nats-server's config lexer understands.
import type { NatsPermissions, NatsUserSpec } from './secure-options.js';
import { TestbedError } from './errors.js';

/** What secures one nats-server: its certificate, the CA it names, and every user (the admin included). */
export interface NatsServerSecurity {
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The user the readiness check connects as; must be one of `users` and allowed JetStream. */
  admin: { user: string; password: string };
  users: readonly NatsUserSpec[];
}

type ConfValue =
  string | number | boolean | readonly ConfValue[] | { readonly [key: string]: ConfValue | undefined };

/** The whole configuration file of a TLS-only, user/password nats-server with JetStream. */
export function natsServerConfig(options: {
  port: number;
  storeDir: string;
  security: NatsServerSecurity;
}): string {
  const { port, storeDir, security } = options;
  const users = security.users.map((user) => ({
    user: user.user,
    password: user.password,
    ...(user.permissions === undefined ? {} : { permissions: permissionsValue(user.permissions) }),
  }));
  const body: Record<string, ConfValue> = {
    listen: `127.0.0.1:${port}`,
    server_name: `offsetsync-test-${port}`,
    jetstream: { store_dir: storeDir },
    // With a tls block nats-server requires TLS of every client: a plaintext CONNECT is never read.
    tls: {
      cert_file: security.certFile,
      key_file: security.keyFile,
      ca_file: security.caFile,
      timeout: 2,
    },
    authorization: { users },
  };
  return `${Object.entries(body)
    .map(([key, value]) => `${key}: ${render(value, '')}`)
    .join('\n')}\n`;
}

function permissionsValue(permissions: NatsPermissions): ConfValue {
  // Copied field by field: a key nats-server does not know would make it refuse to start, far from the cause.
  const lists = (side: { allow?: string[]; deny?: string[] } | undefined) =>
    side === undefined
      ? undefined
      : {
          ...(side.allow === undefined ? {} : { allow: side.allow }),
          ...(side.deny === undefined ? {} : { deny: side.deny }),
        };
  const value: Record<string, ConfValue | undefined> = {
    publish: lists(permissions.publish),
    subscribe: lists(permissions.subscribe),
    allow_responses: permissions.allow_responses,
  };
  return value;
}

function render(value: ConfValue, indent: string): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const inner = `${indent}  `;
  if (isList(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => `${inner}${render(item, inner)}`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value).filter(
    (entry): entry is [string, ConfValue] => entry[1] !== undefined,
  );
  return `{\n${entries.map(([key, item]) => `${inner}${key}: ${render(item, inner)}`).join('\n')}\n${indent}}`;
}

function isList(value: ConfValue): value is readonly ConfValue[] {
  return Array.isArray(value);
}

/**
 * A double-quoted nats-server config string. Its lexer knows only `\t \n \r \" \\` (not JSON's `\u`), and
 * a quoted string is taken literally (no `$variable` expansion), so other control characters are refused.
 */
function quote(text: string): string {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) {
    throw new TestbedError(
      'INVALID_OPTIONS',
      `cannot write ${JSON.stringify(text)} into a nats-server config`,
    );
  }
  const escaped = text
    .replaceAll('\\', '\\\\')
    .replaceAll('"', '\\"')
    .replaceAll('\n', '\\n')
    .replaceAll('\r', '\\r')
    .replaceAll('\t', '\\t');
  return `"${escaped}"`;
}
