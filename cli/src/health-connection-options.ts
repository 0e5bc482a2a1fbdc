// How the operator commands (`status`, `cutover`) are told to reach the health service: the options and
// their help text. Plain data, so that a command's --help needs neither gRPC nor the client.

/** The command-line options that say how to reach the health service, for `parseArgs`. */
export const HEALTH_CONNECTION_OPTIONS = {
  address: { type: 'string' },
  tls: { type: 'boolean', default: false },
  'ca-file': { type: 'string' },
  'cert-file': { type: 'string' },
  'key-file': { type: 'string' },
} as const;

export const HEALTH_CONNECTION_HELP = `  --address <host:port>   Health service gRPC address. Default: 127.0.0.1:50051.
  --tls                   Connect with TLS (system CAs unless --ca-file).
  --ca-file <file>        PEM CA certificates to verify the server with (implies --tls).
  --cert-file <file>      PEM client certificate for mutual TLS (with --key-file).
  --key-file <file>       PEM private key of the client certificate.`;

export const DEFAULT_HEALTH_ADDRESS = '127.0.0.1:50051';

/** The parsed values of {@link HEALTH_CONNECTION_OPTIONS}. */
export interface HealthConnectionValues {
  address?: string | undefined;
  tls?: boolean | undefined;
  'ca-file'?: string | undefined;
  'cert-file'?: string | undefined;
  'key-file'?: string | undefined;
}
