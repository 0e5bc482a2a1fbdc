#!/usr/bin/env node
// offsetsync health: correlates heartbeats from both sides of every link and serves the gRPC health API.
import { runServiceMain } from '@offsetsync/runtime';
import { healthService } from './service.js';

await runServiceMain(healthService);
