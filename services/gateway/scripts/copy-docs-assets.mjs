// Copies the API reference renderer (Scalar's standalone bundle, a dev dependency) beside the compiled
// gateway, so the image serves it without the package's ~240 MB of dependencies (see src/http/docs-assets.ts).
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const source = join(dirname(require.resolve('@scalar/api-reference')), 'browser', 'standalone.js');
const target = fileURLToPath(new URL('../dist/assets/scalar-api-reference.js', import.meta.url));
mkdirSync(dirname(target), { recursive: true });
copyFileSync(source, target);
console.log(`docs assets: ${source} -> ${target}`);
