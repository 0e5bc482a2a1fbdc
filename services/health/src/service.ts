// The health service as a service definition: what `offsetsync health` and the package's own main run.
import type { ServiceDefinition } from '@offsetsync/common';

export const healthService: ServiceDefinition = { role: 'health' };
