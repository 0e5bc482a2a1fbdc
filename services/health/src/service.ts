// The health service as a service definition: what `offsetsync health` and the package's own main run.
import type { ServiceDefinition } from '@offsetsync/runtime';
import { HealthWorker } from './health-worker.js';

export const healthService: ServiceDefinition = {
  role: 'health',
  createWorker: (context) => new HealthWorker(context),
};
