import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPresent, launchChromium } from '../support/browser.js';
import { call, system } from '../support/client.js';

/**
 * The API reference as a reader sees it: Debian's chromium, headless, loads {docs_url} from the
 * running gateway and the renderer (Scalar, served by the gateway) draws the OpenAPI document.
 * What is checked is the first screen (elements whose boxes lie inside the viewport, not text
 * somewhere in the DOM): the introduction and a sidebar listing every group, no loading skeleton,
 * none of the renderer vendor's hosted-service buttons, no console error, no failed request and no
 * request to another origin. Screenshots of the first screens are written to ARTIFACTS_DIR (default
 * `artifacts/`, git-ignored) under docs/, which CI keeps.
 */
const present = chromiumPresent('docs-browser');
const ARTIFACTS = resolve(process.env.ARTIFACTS_DIR ?? resolve(import.meta.dirname, '../../artifacts'), 'docs');
const VIEWPORT = { width: 1280, height: 800 };
/** Rendering a 50-operation document on a loaded two-core machine takes seconds; each wait is for a condition. */
const RENDER_MS = 45_000;

let browser: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;

interface Opened {
  page: Page;
  /** Every URL the page asked for, and what went wrong (console errors, page errors, failed or refused requests). */
  requested: string[];
  failures: string[];
}

async function open(path: string): Promise<Opened> {
  const page = await browser.newPage();
  await page.setViewportSize(VIEWPORT);
  const requested: string[] = [];
  const failures: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('requestfailed', (request) => failures.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`));
  page.on('pageerror', (error) => failures.push(`page error: ${error.message}`));
  // Warnings too: "Document … not found in configList" was Scalar's only word of a broken first screen.
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') failures.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
  });
  const response = await page.goto(`${system().publicUrl}${path}`, { waitUntil: 'load' });
  expect(response?.status(), path).toBe(200);
  return { page, requested, failures };
}

/** Whether the element's box lies (at least partly, and not empty) inside the viewport. */
async function onFirstScreen(locator: Locator): Promise<boolean> {
  const box = await locator.boundingBox();
  return !!box && box.width > 0 && box.height > 0 && box.y < VIEWPORT.height && box.y + box.height > 0 && box.x < VIEWPORT.width && box.x + box.width > 0;
}

/** Nothing but the gateway was asked for (data: URLs aside), and nothing went wrong. */
function expectCleanLoad({ requested, failures }: Opened): void {
  const origin = new URL(system().publicUrl).origin;
  expect(requested.length).toBeGreaterThan(0);
  expect(requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:')), 'requests to another origin').toEqual([]);
  expect(failures, 'console errors and warnings, failed requests').toEqual([]);
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: resolve(ARTIFACTS, `${name}.png`) });
}

/** Labels of the renderer vendor's hosted services (an AI chat, an MCP generator, its developer tools' menus). */
const VENDOR_BUTTONS = /^(Ask AI|Ask AI Agent|Generate MCP|Generate SDKs & MCP|Connect MCP|Developer Tools|Deploy|Share)$/;

describe.skipIf(!present)('the API reference in a browser (headless chromium)', { timeout: 90_000 }, () => {
  let document: { tags: { name: string }[]; paths: Record<string, Record<string, { summary: string; tags: string[] }>> };

  beforeAll(async () => {
    ({ context: browser, close: closeBrowser } = await launchChromium());
    document = (await call(`${system().baseUrl}/openapi.json`, 'GET')).body as typeof document;
  }, 60_000);

  afterAll(async () => {
    await closeBrowser?.();
  });

  it('shows the reference on its first screen: introduction, every group in the sidebar, no skeleton, no vendor buttons', async () => {
    const opened = await open('/docs');
    const { page } = opened;
    const title = page.getByRole('heading', { level: 1, name: 'Rundown API' });
    await title.waitFor({ state: 'visible', timeout: RENDER_MS });
    // Loading placeholders go once the document is drawn; none may stay.
    await page.locator('[class*="skeleton"], [class*="loading"]').first().waitFor({ state: 'detached', timeout: RENDER_MS });

    expect(await onFirstScreen(title), 'the introduction’s title is on the first screen').toBe(true);
    expect(await onFirstScreen(page.getByText('The v1 HTTP API of the show-control rundown service').first()), 'the introduction’s text').toBe(true);
    const sidebar = page.locator('aside').first();
    expect(await onFirstScreen(sidebar)).toBe(true);
    const groups = document.tags.map((tag) => tag.name);
    expect(groups.length).toBeGreaterThan(8);
    const hidden: string[] = [];
    for (const group of groups) {
      if (!(await onFirstScreen(sidebar.getByText(group, { exact: true }).first()))) hidden.push(group);
    }
    expect(hidden, 'sidebar groups not on the first screen').toEqual([]);
    // The page's own links: the error reference and the live events.
    expect(await onFirstScreen(page.locator(`nav a[href="${system().publicUrl}/docs/api-v1/errors"]`))).toBe(true);
    expect(await onFirstScreen(page.locator(`nav a[href="${system().publicUrl}/docs/events"]`))).toBe(true);

    const vendor = await page.locator('button, a').filter({ hasText: VENDOR_BUTTONS }).allInnerTexts();
    expect(vendor, 'buttons of the renderer vendor’s hosted services').toEqual([]);
    await screenshot(page, 'reference-1280x800');
    expectCleanLoad(opened);
    await page.close();
  });

  it('lists every v1 operation of the OpenAPI document by group, and opens one with its example and the models', async () => {
    const opened = await open('/docs');
    const { page } = opened;
    const sidebar = page.locator('aside').first();
    await sidebar.getByText('Meta', { exact: true }).waitFor({ state: 'visible', timeout: RENDER_MS });
    // Each group opens on a click and lists its operations by summary.
    const byGroup = new Map<string, string[]>();
    for (const ops of Object.values(document.paths)) {
      for (const op of Object.values(ops)) byGroup.set(op.tags[0]!, [...(byGroup.get(op.tags[0]!) ?? []), op.summary]);
    }
    expect([...byGroup.values()].flat().length).toBeGreaterThan(40);
    for (const [group, summaries] of byGroup) {
      const last = sidebar.getByText(summaries.at(-1)!, { exact: true }).first();
      if (!(await last.isVisible())) await sidebar.getByText(group, { exact: true }).first().click();
      await last.waitFor({ state: 'visible', timeout: RENDER_MS });
    }
    const text = await sidebar.innerText();
    const missing = [...byGroup].flatMap(([group, summaries]) => summaries.filter((summary) => !text.includes(summary)).map((summary) => `${group}: ${summary}`));
    expect(missing, 'operations the sidebar does not list').toEqual([]);
    // An operation opened from the sidebar shows its request example (from the route table's schemas).
    const create = byGroup.get('Rundowns')!.find((summary) => summary.startsWith('Create a rundown'))!;
    await sidebar.getByText(create, { exact: true }).first().click();
    const example = page.locator('main, [role="main"], .references-rendered').getByText(/Evening News/).first();
    await example.waitFor({ state: 'visible', timeout: RENDER_MS });
    expect(await onFirstScreen(example), 'the opened operation’s request example is on screen').toBe(true);
    // The models (the route table's schemas), the error document first among them.
    await sidebar.getByText('Models', { exact: true }).first().click();
    await sidebar.getByText('Problem', { exact: true }).first().waitFor({ state: 'visible', timeout: RENDER_MS });
    expectCleanLoad(opened);
    await page.close();
  });

  it('shows the deprecated v0 API beside v1', async () => {
    const opened = await open('/docs?api=v0');
    const { page } = opened;
    await page.getByText('Toggle the output message’s visibility').first().waitFor({ state: 'attached', timeout: RENDER_MS });
    const text = await page.locator('body').innerText();
    for (const summary of ['Start the show (or resume it)', 'Lengthen the active cue by', 'Change the output message (text, visibility, colour, style)']) {
      expect(text).toContain(summary);
    }
    expectCleanLoad(opened);
    await page.close();
  });

  it('documents the SSE and Socket.IO events on a page of their own, which links what it refers to', async () => {
    const opened = await open('/docs/events');
    const { page } = opened;
    const title = page.getByRole('heading', { level: 1, name: 'Rundown live events' });
    expect(await onFirstScreen(title)).toBe(true);
    // The introduction links both channels (anchors on this page) and the HTTP references.
    const intro = page.locator('h1 + nav + p');
    for (const href of ['#channel-rundownEvents', '#channel-v0Push', '/docs', '/docs/api-v1/errors']) {
      const link = intro.locator(`a[href$="${href}"]`).first();
      expect(await onFirstScreen(link), `link to ${href} on the first screen`).toBe(true);
    }
    for (const anchor of ['channel-rundownEvents', 'channel-v0Push']) expect(await page.locator(`#${anchor}`).count(), anchor).toBe(1);
    for (const name of ['ready', 'status', 'cue', 'cell', 'heartbeat', 'disconnect', 'serverTime', 'currentCue', 'nextCue', 'timesnap']) {
      expect(await page.locator(`section h3 code`, { hasText: new RegExp(`^${name}$`) }).count(), name).toBe(1);
    }
    const text = await page.locator('body').innerText();
    expect(text).toContain('/api-v0/socket.io');
    // It speaks of what it serves: no internal document named in place of a link.
    expect(text).not.toMatch(/CONTRACT|interface-spec|§\s*\d|\(https?:\/\//);
    await screenshot(page, 'events-1280x800');
    expectCleanLoad(opened);
    await page.close();
  });
});
