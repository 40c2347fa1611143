import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPresent, launchChromium } from '../support/browser.js';
import { call, system } from '../support/client.js';

/**
 * The API reference as a reader sees it: Debian's chromium, headless, loads {docs_url} from the
 * running gateway and the renderer (Scalar, served by the gateway) draws the operations of the
 * OpenAPI document. Every request the page makes must stay on the gateway's origin.
 */
const present = chromiumPresent('docs-browser');

let browser: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;
/** Every URL any page of the test asked for, and what failed. */
const requested: string[] = [];
const failures: string[] = [];

async function open(path: string): Promise<Page> {
  const page = await browser.newPage();
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (error) => failures.push(`${path}: ${error.message}`));
  page.on('console', (message) => {
    // A failed load is reported with its address by the response listener below.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) failures.push(`${path}: console: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${path}: ${response.status()} ${response.url()}`);
  });
  const response = await page.goto(`${system().publicUrl}${path}`, { waitUntil: 'load' });
  expect(response?.status(), path).toBe(200);
  return page;
}

describe.skipIf(!present)('the API reference in a browser (headless chromium)', () => {
  beforeAll(async () => {
    ({ context: browser, close: closeBrowser } = await launchChromium());
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
  });

  it('renders every v1 operation of the OpenAPI document, with its examples and schemas', async () => {
    const document = (await call(`${system().baseUrl}/openapi.json`, 'GET')).body as { paths: Record<string, Record<string, { summary: string }>> };
    const summaries = Object.values(document.paths).flatMap((ops) => Object.values(ops).map((op) => op.summary));
    const page = await open('/docs');
    // Scalar draws each operation's summary as its heading once the document is loaded.
    await page.getByRole('heading', { name: summaries[0]! }).first().waitFor({ timeout: 60_000 });
    const text = await page.locator('#api-reference, body').first().innerText();
    const missing = summaries.filter((summary) => !text.includes(summary));
    expect(missing, 'operations the page does not show').toEqual([]);
    expect(summaries.length).toBeGreaterThan(30);
    // A request example from the route table's schemas, and the browsable models.
    expect(text).toMatch(/Problem/);
    // An operation opened from the sidebar shows its request example (from the route table's schemas).
    const create = summaries.find((summary) => summary.startsWith('Create a rundown'))!;
    await page.getByText(create, { exact: true }).first().click();
    await page.getByText(/Evening News/).first().waitFor({ timeout: 30_000 });
    // The error reference and the events page are linked from the page, and resolve.
    const errorsLink = page.locator(`a[href="${system().publicUrl}/docs/api-v1/errors"]`).first();
    await expect(errorsLink.count()).resolves.toBeGreaterThan(0);
    await page.close();
  });

  it('shows the deprecated v0 API beside v1', async () => {
    const page = await open('/docs?api=v0');
    await page.getByText('Toggle the output message’s visibility').first().waitFor({ timeout: 60_000 });
    const text = await page.locator('body').innerText();
    for (const summary of ['Start the show (or resume it)', 'Lengthen the active cue by', 'Change the output message (text, visibility, colour, style)']) {
      expect(text).toContain(summary);
    }
    await page.close();
  });

  it('documents the SSE and Socket.IO events on a page of their own, linked from the reference', async () => {
    const page = await open('/docs/events');
    const text = await page.locator('body').innerText();
    for (const name of ['ready', 'status', 'cue', 'cell', 'heartbeat', 'disconnect', 'serverTime', 'currentCue', 'nextCue', 'timesnap']) {
      expect(await page.locator(`section h3 code`, { hasText: new RegExp(`^${name}$`) }).count(), name).toBe(1);
    }
    expect(text).toContain('/api-v0/socket.io');
    await page.close();
  });

  it('loads nothing from anywhere but the gateway, and nothing fails', () => {
    const origin = new URL(system().publicUrl).origin;
    expect(requested.length).toBeGreaterThan(4);
    expect(requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual([]);
    expect(failures).toEqual([]);
  });
});
