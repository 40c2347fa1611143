import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * The image tier (`bash scripts/image.sh` runs it after building the image; not part of `npm test`,
 * which has no image): the e2e tier's client helpers against the whole system started from the
 * built image, one container per service (test/image/system.ts).
 */
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  resolve: base.resolve,
  test: {
    name: 'image',
    include: ['test/image/**/*.test.ts'],
    globalSetup: ['test/image/system.ts'],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    // One system; the files share it.
    fileParallelism: false,
  },
});
