import { afterAll } from 'vitest';
import { stopStarted } from './processes.js';

// A setup file of the integration and e2e tiers: after each file, whatever process its tests started
// and did not stop (a test that timed out before its own `stop`) is stopped.
afterAll(stopStarted, 30_000);
