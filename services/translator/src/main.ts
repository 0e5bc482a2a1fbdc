#!/usr/bin/env node
// offsetsync translator: maps anchored source commits to offsets on its target cluster.
import { runServiceMain } from '@offsetsync/common';
import { translatorService } from './service.js';

await runServiceMain(translatorService);
