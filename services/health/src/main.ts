#!/usr/bin/env node
// offsetsync health: the shared plumbing (config, telemetry, NATS streams, heartbeats, signals).
import { runServiceMain } from '@offsetsync/common';

await runServiceMain({ role: 'health' });
