// The collector as a service definition: what `offsetsync collector` and the package's own main run.
import type { ServiceDefinition } from '@offsetsync/runtime';
import { createCollectorWorker } from './collector-worker.js';

export const collectorService: ServiceDefinition = {
  role: 'collector',
  createWorker: (context) => createCollectorWorker(context),
};
