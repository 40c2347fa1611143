import type { TestProject } from 'vitest/node';
import { startE2eSystem } from './e2e-setup.js';

/** The e2e-sentinel project: the whole system on a Sentinel group of its own (vitest.config.ts). */
export default function setup(project: TestProject) {
  return startE2eSystem(project, 'sentinel');
}
