// The four service roles as the harness starts them, each with the role its heartbeats carry.
import { ServiceRole } from '@offsetsync/contracts';
import type { Role } from '@offsetsync/harness';

export const SERVICE_ROLES: readonly { role: Role; heartbeatRole: ServiceRole }[] = [
  { role: 'collector', heartbeatRole: ServiceRole.SERVICE_ROLE_COLLECTOR },
  { role: 'translator', heartbeatRole: ServiceRole.SERVICE_ROLE_TRANSLATOR },
  { role: 'committer', heartbeatRole: ServiceRole.SERVICE_ROLE_COMMITTER },
  { role: 'health', heartbeatRole: ServiceRole.SERVICE_ROLE_HEALTH },
];
