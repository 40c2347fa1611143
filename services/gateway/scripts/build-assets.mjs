// The gateway's browser assets, built beside the compiled gateway (dist/), which is what the image has
// (its dev dependencies are pruned after the build):
// - the API reference renderer: Scalar's standalone bundle (a dev dependency), copied, so the image
//   serves it without the package's ~240 MB of dependencies (see src/http/docs-assets.ts);
// - the stage screen (viewer/, docs/api-decisions.md#viewer): bundled by esbuild into dist/viewer/ (see src/http/viewer.ts).
// Run by `npm run build` and by `npm start` (scripts/launcher/build.ts) after tsc.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const gateway = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

const scalar = join(dirname(require.resolve('@scalar/api-reference')), 'browser', 'standalone.js');
const scalarTarget = join(gateway, 'dist/assets/scalar-api-reference.js');
mkdirSync(dirname(scalarTarget), { recursive: true });
copyFileSync(scalar, scalarTarget);
console.log(`docs assets: ${scalar} -> ${scalarTarget}`);

await buildViewer(join(gateway, 'viewer'), join(gateway, 'dist/viewer'));

/**
 * The page's script (TypeScript and the SSE client, one minified ES module) and stylesheet, named by
 * their content hash (served as immutable), and index.html naming them. Placeholders the gateway
 * fills per deployment stay as they are ({{api}}, {{heartbeat_ms}}); the asset names become
 * {{assets}}/<file>.
 */
async function buildViewer(source, target) {
  rmSync(target, { recursive: true, force: true });
  const assets = join(target, 'assets');
  const result = await build({
    absWorkingDir: source,
    entryPoints: [
      { in: 'src/main.ts', out: 'viewer' },
      { in: 'viewer.css', out: 'viewer' },
    ],
    bundle: true,
    minify: true,
    sourcemap: 'linked',
    format: 'esm',
    // What stage screens run: evergreen browsers, smart TVs and players of the last few years.
    target: ['chrome100', 'edge100', 'firefox100', 'safari15.4'],
    entryNames: '[name]-[hash]',
    outdir: assets,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const built = Object.entries(result.metafile.outputs).filter(([, output]) => output.entryPoint);
  const named = (ext) => {
    const found = built.find(([file]) => file.endsWith(ext));
    if (!found) throw new Error(`viewer: esbuild wrote no ${ext} file`);
    return basename(found[0]);
  };
  const html = readFileSync(join(source, 'index.html'), 'utf8')
    .replace('{{viewer.js}}', `{{assets}}/${named('.js')}`)
    .replace('{{viewer.css}}', `{{assets}}/${named('.css')}`);
  writeFileSync(join(target, 'index.html'), html);
  const bytes = built.map(([file, output]) => `${basename(file)} ${output.bytes} B`).join(', ');
  console.log(`viewer: ${source} -> ${target} (${bytes})`);
}
