import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The API reference renderer: Scalar's standalone browser bundle (`@scalar/api-reference`, a dev
 * dependency: its package pulls ~240 MB of dependencies the gateway never runs). The gateway's build
 * copies the one file it serves to `dist/assets/` (scripts/build-assets.mjs), which is what the
 * image has; running from source, it is read from the package.
 */
const SCALAR_BUNDLE = 'scalar-api-reference.js';

export function scalarBundlePath(): string {
  // src/http and dist/http are both two levels below the gateway's folder.
  const built = fileURLToPath(new URL(`../../dist/assets/${SCALAR_BUNDLE}`, import.meta.url));
  if (existsSync(built)) return built;
  try {
    const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
    const fromPackage = join(dirname(entry), 'browser', 'standalone.js');
    if (existsSync(fromPackage)) return fromPackage;
  } catch {
    // Not installed: fall through to the message below.
  }
  throw new Error(`The API reference renderer is missing: neither ${built} nor @scalar/api-reference is present (run npm ci, then npm run build).`);
}

/**
 * `@font-face` rules that fetch a font from another origin (the bundle embeds Scalar's own font CDN,
 * and some of its components include them whatever `withDefaultFonts` says). The page's CSP would
 * refuse them anyway; removed, the browser asks nothing of another origin and falls back to the
 * system fonts the page names.
 */
const REMOTE_FONT_FACE = /@font-face\s*\{[^}]*url\(\s*["']?https?:\/\/[^}]*\}/g;

/** The renderer as the gateway serves it, remote fonts removed. */
export function loadScalarBundle(path = scalarBundlePath()): string {
  return readFileSync(path, 'utf8').replace(REMOTE_FONT_FACE, '');
}

let bundle: Buffer | undefined;

/** The served bytes, prepared once per process (every public app of the process shares them). */
export function scalarBundle(): Buffer {
  return (bundle ??= Buffer.from(loadScalarBundle()));
}
