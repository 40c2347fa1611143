import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's chromium (CHROMIUM_PATH to use another), driven by playwright-core. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Whether the browser tests of `suite` can run. CI installs chromium (.ci/run): there, its absence
 * is a failure, not a skip.
 */
export function chromiumPresent(suite: string): boolean {
  const present = existsSync(CHROMIUM);
  if (!present && process.env.CI) throw new Error(`${suite}: no chromium at ${CHROMIUM} under CI (.ci/run installs Debian's chromium)`);
  if (!present) console.warn(`${suite}: SKIPPED, no chromium at ${CHROMIUM} (Debian: apt-get install chromium; .ci/run installs it)`);
  return present;
}

/** Headless chromium with a fresh profile of its own (playwright passes it as --user-data-dir). */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'rundown-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
