#!/usr/bin/env node
// offsetsync translator: the shared plumbing (config, telemetry, NATS streams, heartbeats, signals).
import { runServiceMain } from '@offsetsync/common';

await runServiceMain({ role: 'translator' });
