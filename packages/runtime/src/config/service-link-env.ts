// Kubernetes service links: the kubelet gives every pod variables for each Service of its namespace that
// existed when the pod started (unless the pod sets `enableServiceLinks: false`). A Service named
// `offsetsync-health` yields `OFFSETSYNC_HEALTH_SERVICE_HOST` and friends, which share the offsetsync
// prefix but are not settings. This module tells them apart from settings, pure and from the environment
// alone, so that env-overrides.ts can skip them without skipping a mistyped setting.
//
// A variable counts as a service link only when Kubernetes would have written exactly that name with exactly
// that value: the shapes and values below are those of the kubelet's envvars.FromServices (Docker-link
// compatible variables included), and every Service Kubernetes writes variables for has a ClusterIP in
// `<NAME>_SERVICE_HOST`, so that variable must be present with an IP address and the others must agree
// with it. That keeps a mistyped setting reported: a typo can drop one `_` of the `__` separator
// (`OFFSETSYNC_PROBES_PORT=8080` for `OFFSETSYNC_PROBES__PORT`) and land on a service-link name, but not
// also on the value Kubernetes writes there (`tcp://<cluster ip>:<port>`) next to a `_SERVICE_HOST`.
import { isIP } from 'node:net';
import { ENV_PREFIX, SEPARATOR } from './env-names.js';

/** What {@link kubernetesServiceLink} makes of a variable. */
export type ServiceLinkVerdict =
  /** Written by Kubernetes for the Service `service` (its name as in the cluster, `offsetsync-health`). */
  | { readonly kind: 'service-link'; readonly service: string }
  /** Shaped like a service link of `service`, but not what Kubernetes writes: `reason` says why. */
  | { readonly kind: 'mismatch'; readonly service: string; readonly reason: string }
  /** No service-link shape at all. */
  | { readonly kind: 'none' };

/**
 * The variable-name form of a Service name that can carry the prefix: Kubernetes upper-cases the name and
 * writes `-` as `_`; Service names are DNS labels, so the parts are letters and digits. Parts are never
 * empty, so a name with the `__` separator never matches (see {@link kubernetesServiceLink}).
 */
const SERVICE_ENV_NAME = new RegExp(`^${ENV_PREFIX.slice(0, -1)}(?:_[A-Z0-9]+)*$`);
/** A port name (IANA_SVC_NAME: lower-case letters, digits and single `-`, at least one letter), upper-cased. */
const PORT_NAME = /^(?=[A-Z0-9_]*[A-Z])[A-Z0-9]+(?:_[A-Z0-9]+)*$/;
const PORT_NUMBER = /^[1-9][0-9]{0,4}$/;

/** The `<suffix>` of `<NAME><suffix>`, and what its value must be given the Service's ClusterIP. */
interface Shape {
  readonly pattern: RegExp;
  readonly valueMatches: (
    groups: Readonly<Record<string, string>>,
    value: string,
    clusterIp: string,
  ) => boolean;
}

const SHAPES: readonly Shape[] = [
  { pattern: /^_SERVICE_HOST$/, valueMatches: (_, value, ip) => value === ip },
  { pattern: /^_SERVICE_PORT$/, valueMatches: (_, value) => isPort(value) },
  {
    pattern: /^_SERVICE_PORT_(?<portName>[A-Z0-9_]+)$/,
    valueMatches: (g, value) => PORT_NAME.test(g.portName ?? '') && isPort(value),
  },
  // The first port, Docker-link style: `tcp://10.0.0.1:9090`.
  {
    pattern: /^_PORT$/,
    valueMatches: (_, value, ip) => {
      const url = /^(?:tcp|udp|sctp):\/\/(?<hostPort>.+):(?<port>[^:]+)$/.exec(value);
      const port = url?.groups?.port ?? '';
      return isPort(port) && `${url?.groups?.hostPort ?? ''}:${port}` === joinHostPort(ip, port);
    },
  },
  {
    pattern: /^_PORT_(?<port>\d+)_(?<protocol>TCP|UDP|SCTP)$/,
    valueMatches: (g, value, ip) =>
      isPort(g.port ?? '') &&
      value === `${(g.protocol ?? '').toLowerCase()}://${joinHostPort(ip, g.port ?? '')}`,
  },
  {
    pattern: /^_PORT_(?<port>\d+)_(?<protocol>TCP|UDP|SCTP)_PROTO$/,
    valueMatches: (g, value) => isPort(g.port ?? '') && value === (g.protocol ?? '').toLowerCase(),
  },
  {
    pattern: /^_PORT_(?<port>\d+)_(?<protocol>TCP|UDP|SCTP)_PORT$/,
    valueMatches: (g, value) => isPort(g.port ?? '') && value === g.port,
  },
  {
    pattern: /^_PORT_(?<port>\d+)_(?<protocol>TCP|UDP|SCTP)_ADDR$/,
    valueMatches: (g, value, ip) => isPort(g.port ?? '') && value === ip,
  },
];

/**
 * Whether `name=value` is a variable Kubernetes wrote for a Service, given the rest of the environment
 * (`env` must hold the Service's `<NAME>_SERVICE_HOST`). Names containing `__` are never service links:
 * `__` separates the levels of a setting's path, so such a name is a setting or a mistyped one (a Service
 * whose name contains `--` cannot be told apart and is reported; such pods need `enableServiceLinks: false`).
 */
export function kubernetesServiceLink(
  name: string,
  value: string,
  env: NodeJS.ProcessEnv,
): ServiceLinkVerdict {
  if (!name.startsWith(ENV_PREFIX) || name.includes(SEPARATOR)) return { kind: 'none' };
  let mismatch: ServiceLinkVerdict | undefined;
  // The Service name may itself contain `_PORT` or `_SERVICE`: try every split of name into <NAME><suffix>.
  for (let at = name.indexOf('_'); at !== -1; at = name.indexOf('_', at + 1)) {
    const serviceEnvName = name.slice(0, at);
    if (!SERVICE_ENV_NAME.test(serviceEnvName)) continue;
    const suffix = name.slice(at);
    for (const shape of SHAPES) {
      const match = shape.pattern.exec(suffix);
      if (match === null) continue;
      const service = serviceEnvName.toLowerCase().replace(/_/g, '-');
      const hostVariable = `${serviceEnvName}_SERVICE_HOST`;
      const clusterIp = env[hostVariable];
      let reason: string | undefined;
      if (clusterIp === undefined) reason = `${hostVariable} is not set`;
      else if (isIP(clusterIp) === 0) reason = `${hostVariable} is not an IP address`;
      else if (!shape.valueMatches(match.groups ?? {}, value, clusterIp))
        reason = 'its value is not what Kubernetes writes there';
      if (reason === undefined) return { kind: 'service-link', service };
      mismatch ??= { kind: 'mismatch', service, reason };
    }
  }
  return mismatch ?? { kind: 'none' };
}

function isPort(text: string): boolean {
  return PORT_NUMBER.test(text) && Number(text) <= 65_535;
}

/** As Go's net.JoinHostPort, which the kubelet uses: an IPv6 address goes in brackets. */
function joinHostPort(host: string, port: string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
