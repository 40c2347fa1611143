import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/launcher/child.js';
import { chromiumPresent, launchChromium } from '../support/browser.js';
import { admin, call, createRundown, createTeam, v1, type TestTeam } from '../support/client.js';
import { startGateway, type ExtraGateway } from '../support/gateway.js';

/**
 * The stage screen (docs/api-decisions.md#viewer) as a screen in the room shows it: Debian's chromium, headless,
 * opens `/view/<rundown id>#token=<VIEW token>` from a gateway of the running system and follows a
 * show driven through the v1 API. That gateway is one the test starts itself (a short heartbeat, so
 * a revocation reaches the stream within a second), on a port it can kill and restart.
 *
 * Screenshots of each layout are written to ARTIFACTS_DIR (default `artifacts/`, git-ignored) under
 * `viewer/`; CI keeps that folder.
 */
// The functions given to page.evaluate run in the page; this program is typed for Node, without the DOM.
declare const document: any, window: any, MutationObserver: any, getComputedStyle: any, innerWidth: number, innerHeight: number;

const present = chromiumPresent('viewer-browser');
const ARTIFACTS = resolve(process.env.ARTIFACTS_DIR ?? resolve(import.meta.dirname, '../../artifacts'), 'viewer');
const HEARTBEAT_MS = 1_000;

let browser: BrowserContext;
let closeBrowser: (() => Promise<void>) | undefined;
let gateway: ExtraGateway;
let port: number;
let team: TestTeam;
let owner: string;
let caller: string;
let viewer: string;
let rundown: { id: string };
const cue: Record<string, string> = {};

/** Every URL any page asked for, and what went wrong on any page. */
const requested: string[] = [];
const failures: string[] = [];
const pages: Page[] = [];

/**
 * The screen's gateway, always on `port`. Its other listeners take fresh ports, which another run on
 * this machine may take between the check and the bind: then it starts again on others.
 */
async function startViewerGateway(): Promise<ExtraGateway> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startGateway({ SSE_HEARTBEAT_MS: String(HEARTBEAT_MS), HTTP_PORT: String(port) });
    } catch (error) {
      if (attempt === 3 || !/EADDRINUSE/.test(String(error)) || new RegExp(`EADDRINUSE.*:${port}\\b`).test(String(error))) throw error;
    }
  }
}

async function open(fragment: string, viewport = { width: 1280, height: 720 }, query = ''): Promise<{ page: Page; response: Response | null }> {
  const page = await browser.newPage();
  pages.push(page);
  await page.setViewportSize(viewport);
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (error) => failures.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    // Refused answers (the revoked token's 401, a fetch to a killed gateway) are logged by the browser, as they should be.
    if (message.type() === 'error' && !/Failed to load resource|ERR_CONNECTION_REFUSED|net::ERR/.test(message.text())) failures.push(`console: ${message.text()}`);
  });
  // CSP violations, as the page sees them.
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event: { violatedDirective: string; blockedURI: string }) => {
      console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  const response = await page.goto(`${gateway.publicUrl}/view/${rundown.id}${query}#${fragment}`, { waitUntil: 'load' });
  return { page, response };
}

const role = (page: Page, name: string) => page.locator(`[data-role="${name}"]`);
const textOf = (page: Page, name: string) => role(page, name).textContent();

async function waitState(page: Page, state: string, timeout = 10_000): Promise<void> {
  await page.waitForFunction((s) => document.documentElement.dataset.state === s, state, { timeout, polling: 50 });
}

async function waitText(page: Page, name: string, expected: string, timeout = 10_000): Promise<void> {
  await page.waitForFunction(([r, t]) => document.querySelector(`[data-role="${r}"]`)?.textContent === t, [name, expected] as const, { timeout, polling: 'raf' });
}

/** `M:SS`, `H:MM:SS`, with a leading `-` over time → ms. */
function countdownMs(text: string | null): number {
  const match = /^(-?)(?:(\d+):)?(\d{1,2}):(\d\d)$/.exec(text ?? '');
  if (!match) throw new Error(`not a countdown: ${JSON.stringify(text)}`);
  const [, sign, h = '0', m, s] = match;
  return (sign ? -1 : 1) * (Number(h) * 3600 + Number(m) * 60 + Number(s)) * 1000;
}

async function act(verb: string, body?: unknown) {
  const res = await v1('POST', `/rundowns/${rundown.id}/action:${verb}`, { token: caller, ...(body ? { body } : {}) });
  expect(res.status, res.text).toBe(200);
  return res;
}

/** Records every change of a part's text with the time it happened (the browser's clock, which is this machine's). */
async function recordChanges(page: Page, name: string): Promise<void> {
  await page.evaluate((r) => {
    const el = document.querySelector(`[data-role="${r}"]`);
    const changes: { text: string; at: number }[] = [];
    window[`changes:${r}`] = changes;
    new MutationObserver(() => changes.push({ text: el.textContent ?? '', at: Date.now() })).observe(el, { childList: true, characterData: true, subtree: true });
  }, name);
}

const changesOf = (page: Page, name: string) => page.evaluate((r): { text: string; at: number }[] => window[`changes:${r}`], name);

/** Seconds of the day of an `HH:MM:SS` text. */
const secondsOfDay = (text: string) => text.split(':').map(Number).reduce((total, part) => total * 60 + part, 0);

describe.skipIf(!present)('the stage screen in a browser (headless chromium)', () => {
  let main: Page;

  beforeAll(async () => {
    port = await freePort();
    [{ context: browser, close: closeBrowser }, gateway, team] = await Promise.all([launchChromium(), startViewerGateway(), createTeam()]);
    [owner, caller] = await Promise.all([team.token('OWNER'), team.token('SHOWCALL')]);
    rundown = await createRundown(owner, {
      title: 'Evening News',
      timezone: 'Asia/Tokyo',
      start_time: Date.now() + 10 * 60_000,
      settings: { tod_display_format: '24h' },
      cues: [
        { title: 'Opening', subtitle: 'Anchor on cam 1', duration_ms: 125_000, background_color: '#1f6feb' },
        { title: 'Headlines', subtitle: 'Three stories', duration_ms: 90_000 },
        { title: 'Weather', duration_ms: 2_000 },
        { title: 'Sports', duration_ms: 60_000 },
        { title: 'Marathon', duration_ms: 10 * 3_600_000 },
      ],
    });
    const cues = await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner });
    for (const c of cues.body.data.items as { id: string; title: string }[]) cue[c.title] = c.id;
    // The screen's token: VIEW, scoped to this rundown, as the docs say to mint it.
    viewer = await team.token('VIEW', { rundown_id: rundown.id });
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await closeBrowser?.();
    await gateway?.stop();
  });

  it('is one page with a strict CSP and no Referer, before the show: pre-show, the first cue next, the time of day in the rundown’s timezone', async () => {
    const { page, response } = await open(`token=${viewer}`);
    main = page;
    expect(response?.status()).toBe(200);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(headers['content-security-policy']).toMatch(/script-src 'self'(;|$)/);
    expect(headers['content-security-policy']).not.toMatch(/unsafe/);
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['x-content-type-options']).toBe('nosniff');

    await waitState(page, 'pre-show');
    expect(await textOf(page, 'next-title')).toBe('Opening');
    expect(await textOf(page, 'current-title')).toBe('');
    // Until the planned start (10 minutes away): 10:00 or 9:5x.
    expect(countdownMs(await textOf(page, 'countdown'))).toBeGreaterThan(9 * 60_000);
    // 24-hour, in Tokyo, within a second or two of this machine's clock there.
    const clock = (await textOf(page, 'clock'))!;
    expect(clock).toMatch(/^\d\d:\d\d:\d\d$/);
    const tokyo = new Intl.DateTimeFormat('en-GB', { timeZone: 'Asia/Tokyo', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(Date.now());
    const apart = Math.abs(secondsOfDay(clock) - secondsOfDay(tokyo));
    expect(Math.min(apart, 86_400 - apart)).toBeLessThanOrEqual(2);
    expect(await role(page, 'message').count()).toBe(0);
  });

  it('shows the active cue and a countdown that falls by a second each second', async () => {
    await act('start');
    await waitState(main, 'running');
    await waitText(main, 'current-title', 'Opening');
    expect(await textOf(main, 'current-subtitle')).toBe('Anchor on cam 1');
    expect(await textOf(main, 'next-title')).toBe('Headlines');
    const samples: { at: number; ms: number }[] = [];
    for (let i = 0; i < 9; i++) {
      samples.push({ at: Date.now(), ms: countdownMs(await textOf(main, 'countdown')) });
      await new Promise((r) => setTimeout(r, 400));
    }
    expect(samples[0]!.ms).toBeLessThanOrEqual(125_000);
    expect(samples[0]!.ms).toBeGreaterThan(115_000);
    for (let i = 1; i < samples.length; i++) expect(samples[i]!.ms).toBeLessThanOrEqual(samples[i - 1]!.ms);
    const fell = samples[0]!.ms - samples.at(-1)!.ms;
    const elapsed = samples.at(-1)!.at - samples[0]!.at;
    expect(Math.abs(fell - elapsed)).toBeLessThanOrEqual(1_000);
  });

  it('puts action:next (and previous) on screen within 500 ms', async () => {
    await recordChanges(main, 'current-title');
    const delays: number[] = [];
    for (const [verb, title] of [['next', 'Headlines'], ['previous', 'Opening'], ['next', 'Headlines'], ['previous', 'Opening']] as const) {
      const sent = Date.now();
      await act(verb);
      await waitText(main, 'current-title', title, 2_000);
      const shown = (await changesOf(main, 'current-title')).filter((c) => c.text === title && c.at >= sent).at(0)!;
      delays.push(shown.at - sent);
    }
    expect(Math.max(...delays), `action to screen: ${delays.join(', ')} ms`).toBeLessThan(500);
  });

  it('freezes while paused, and carries on from there', async () => {
    await act('pause');
    await waitState(main, 'paused', 2_000);
    const frozen = await textOf(main, 'countdown');
    await new Promise((r) => setTimeout(r, 2_200));
    expect(await textOf(main, 'countdown')).toBe(frozen);
    expect(await textOf(main, 'current-title')).toBe('Opening');
    await act('start');
    await waitState(main, 'running', 2_000);
    expect(Math.abs(countdownMs(await textOf(main, 'countdown')) - countdownMs(frozen))).toBeLessThanOrEqual(1_000);
  });

  it('shows the output message while it is visible, in its colour and style, and removes it', async () => {
    const set = (body: Record<string, unknown>) => v1('PATCH', `/rundowns/${rundown.id}/output-message`, { token: caller, body });
    expect((await set({ text: 'Wrap up in 30 seconds', visible: true, color: '#ff3b30', bold: true })).status).toBe(200);
    await waitText(main, 'message', 'Wrap up in 30 seconds', 2_000);
    const style = await role(main, 'message').evaluate((el) => ({ color: getComputedStyle(el).color, weight: Number(getComputedStyle(el).fontWeight) }));
    expect(style.color).toBe('rgb(255, 59, 48)');
    expect(style.weight).toBeGreaterThanOrEqual(700);
    expect((await set({ visible: false })).status).toBe(200);
    await main.waitForFunction(() => document.querySelector('[data-role="message"]') === null, undefined, { timeout: 2_000 });
    expect((await set({ visible: true })).status).toBe(200);
    await waitText(main, 'message', 'Wrap up in 30 seconds', 2_000);
  });

  it('marks over time: a leading -, red, counting up; and the over/under of the show', async () => {
    await act('jump', { cue_id: cue.Weather });
    await waitText(main, 'current-title', 'Weather', 2_000);
    await main.waitForFunction(() => document.querySelector('[data-role="countdown"]')?.textContent?.startsWith('-'), undefined, { timeout: 5_000, polling: 50 });
    const over = role(main, 'countdown');
    const first = countdownMs(await over.textContent());
    expect(await over.getAttribute('data-over')).toBe('');
    const [r, g, b] = (await over.evaluate((el) => getComputedStyle(el).color)).match(/\d+/g)!.map(Number) as [number, number, number];
    expect(r).toBeGreaterThan(200);
    expect(g + b).toBeLessThan(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(countdownMs(await over.textContent())).toBeLessThanOrEqual(first - 2_000);

    // §10: the page's over/under is the API's (the page carries the last timing forward, as the API would compute it now).
    const timing = await v1('GET', `/rundowns/${rundown.id}/timing`, { token: viewer });
    const shown = (await textOf(main, 'over-under'))!;
    expect(shown).toMatch(/^[+-]?\d+:\d\d$/);
    expect(Math.abs(countdownMs(shown.replace('+', '')) - timing.body.data.over_under_ms)).toBeLessThanOrEqual(2_000);
  });

  it('agrees with a second screen opened beside it within 100 ms, each ticking once a second', async () => {
    await act('next'); // Sports, 60 s
    await waitText(main, 'current-title', 'Sports', 2_000);
    const { page: second } = await open(`token=${viewer}`);
    await waitState(second, 'running');
    await waitText(second, 'current-title', 'Sports');
    await Promise.all([recordChanges(main, 'countdown'), recordChanges(second, 'countdown')]);
    await new Promise((r) => setTimeout(r, 4_300));
    const [a, b] = await Promise.all([changesOf(main, 'countdown'), changesOf(second, 'countdown')]);
    const atB = new Map(b.map((c) => [c.text, c.at]));
    const both = a.filter((c) => atB.has(c.text));
    expect(both.length).toBeGreaterThanOrEqual(3);
    const gaps = both.map((c) => Math.abs(c.at - atB.get(c.text)!));
    expect(Math.max(...gaps), `the same second shown at times ${gaps.join(', ')} ms apart`).toBeLessThanOrEqual(100);
    // And both on time: `M:SS` appears when exactly that much is left of the active cue, by the status
    // (the system runs on this machine, so its clock is the browser's).
    const active = (await v1('GET', `/rundowns/${rundown.id}/status`, { token: viewer })).body.data.active_cue;
    for (const ticks of [a, b]) {
      const late = ticks.map((t) => t.at - (active.started_at + active.duration_ms - countdownMs(t.text)));
      expect(Math.max(...late.map(Math.abs)), `shown late (ms) by ${late.join(', ')}`).toBeLessThanOrEqual(100);
      for (let i = 1; i < ticks.length; i++) expect(countdownMs(ticks[i - 1]!.text) - countdownMs(ticks[i]!.text)).toBe(1_000);
    }
    await second.close();
  });

  it('fits a 16:9 screen, a phone and a portrait tablet, in large type (screenshots kept)', async () => {
    const layouts = [
      { name: '16x9-1920x1080', width: 1920, height: 1080 },
      { name: '16x9-1280x720', width: 1280, height: 720 },
      { name: 'phone-390x844', width: 390, height: 844 },
      { name: 'tablet-portrait-820x1180', width: 820, height: 1180 },
    ];
    const check = async (layout: (typeof layouts)[number], name: string, share = 5) => {
      await main.setViewportSize({ width: layout.width, height: layout.height });
      await main.waitForTimeout(150);
      const fit = await main.evaluate(() => {
        const outside: string[] = [];
        for (const el of document.querySelectorAll('.screen [data-role]')) {
          const box = el.getBoundingClientRect();
          if (box.width === 0 && box.height === 0) continue;
          if (box.left < -1 || box.top < -1 || box.right > innerWidth + 1 || box.bottom > innerHeight + 1) outside.push(el.dataset.role);
        }
        const countdown = document.querySelector('[data-role="countdown"]');
        const own = countdown.getBoundingClientRect();
        const room = countdown.parentElement.getBoundingClientRect();
        if (own.width > room.width + 1 || own.height > room.height + 1) outside.push('countdown (wider or taller than its box)');
        return {
          outside,
          scrolls: document.documentElement.scrollHeight > innerHeight || document.documentElement.scrollWidth > innerWidth,
          countdownPx: parseFloat(getComputedStyle(countdown).fontSize),
          titlePx: parseFloat(getComputedStyle(document.querySelector('[data-role="current-title"]')).fontSize),
        };
      });
      expect(fit.outside, name).toEqual([]);
      expect(fit.scrolls, name).toBe(false);
      // Across a room: the countdown's digits at least a fifth of the screen's width or height, whichever is
      // smaller (a sixth for the eight characters of -H:MM:SS, which must still fit a phone's width).
      expect(fit.countdownPx, name).toBeGreaterThanOrEqual(Math.min(layout.width, layout.height) / share);
      expect(fit.titlePx, name).toBeGreaterThanOrEqual(22);
      await main.screenshot({ path: resolve(ARTIFACTS, `${name}.png`) });
    };
    for (const layout of layouts) await check(layout, layout.name);
    // The longest countdown (a ten-hour cue: 10:00:00) fits too.
    await act('jump', { cue_id: cue.Marathon });
    await waitText(main, 'current-title', 'Marathon', 2_000);
    for (const layout of [layouts[0]!, layouts[2]!]) await check(layout, `long-${layout.name}`, 6);
    await act('jump', { cue_id: cue.Sports });
    await waitText(main, 'current-title', 'Sports', 2_000);
    await main.setViewportSize({ width: 1280, height: 720 });
  });

  it('shows only what the address asks: countdown only, light, mirrored for a teleprompter glass', async () => {
    const { page } = await open(`token=${viewer}&show=countdown&theme=light`, { width: 1280, height: 720 }, '?mirror=1');
    await waitState(page, 'running');
    await waitText(page, 'current-title', 'Sports');
    expect(await role(page, 'countdown').isVisible()).toBe(true);
    for (const hidden of ['current-title', 'current-subtitle', 'next-title', 'clock', 'over-under', 'progress', 'state-label']) {
      expect(await role(page, hidden).isVisible(), hidden).toBe(false);
    }
    expect(await role(page, 'message').count()).toBe(0);
    const looks = await page.evaluate(() => ({ background: getComputedStyle(document.body).backgroundColor, transform: getComputedStyle(document.body).transform }));
    expect(looks.background).toBe('rgb(255, 255, 255)');
    expect(looks.transform).toBe('matrix(-1, 0, 0, 1, 0, 0)');
    await page.screenshot({ path: resolve(ARTIFACTS, 'countdown-only-light-mirrored.png') });
    await page.close();
  });

  it('says it is reconnecting when its gateway is killed, keeps counting, and shows the current state once it is back', async () => {
    await gateway.kill();
    await waitState(main, 'offline', 5_000);
    expect(await role(main, 'notice').textContent()).toMatch(/Reconnecting/);
    const before = countdownMs(await textOf(main, 'countdown'));
    // The show ends meanwhile, through the system's own gateway; this screen still counts what it knew.
    await act('end');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(countdownMs(await textOf(main, 'countdown'))).toBeLessThan(before);
    await main.screenshot({ path: resolve(ARTIFACTS, 'offline-1280x720.png') });
    gateway = await startViewerGateway();
    await waitState(main, 'ended', 15_000);
    expect(await textOf(main, 'current-title')).toBe('');
    expect(await role(main, 'notice').isVisible()).toBe(false);
  });

  it('shows the refused state when its token is revoked, and for a token it cannot use', async () => {
    await admin('POST', `/rundowns/${rundown.id}/runner:reset`);
    const minted = await admin('POST', `/teams/${team.id}/tokens`, { role: 'VIEW', rundown_id: rundown.id });
    expect(minted.status, minted.text).toBe(201);
    const { page } = await open(`token=${minted.body.data.token}`);
    await waitState(page, 'pre-show');
    expect((await admin('DELETE', `/tokens/${minted.body.data.id}`)).status).toBe(204);
    await waitState(page, 'unauthorized', 5_000);
    expect(await role(page, 'notice').textContent()).toMatch(/revoked/);
    expect(await page.locator('.screen').evaluate((el) => getComputedStyle(el).visibility)).toBe('hidden');
    await page.screenshot({ path: resolve(ARTIFACTS, 'refused-1280x720.png') });

    // Opened again with it: refused at once. No token, or a token of another rundown: the same.
    const other = await createRundown(owner, { title: 'Other show' });
    const otherToken = await team.token('VIEW', { rundown_id: other.id });
    for (const fragment of [`token=${minted.body.data.token}`, '', `token=${otherToken}`, 'token=not-a-token']) {
      const { page: refused } = await open(fragment);
      await waitState(refused, 'unauthorized', 5_000);
      expect(await role(refused, 'notice').textContent(), fragment).toMatch(/token|rundown/i);
      await refused.close();
    }
  });

  it('asks nothing of another origin, and nothing on the page fails', async () => {
    const origin = new URL(gateway.publicUrl).origin;
    expect(requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual([]);
    expect(requested.some((url) => url.includes('/events?'))).toBe(true);
    // The page's assets: one script and one stylesheet, each by its content hash, cached for good.
    const html = await call(`${gateway.publicUrl}/view/${rundown.id}`, 'GET');
    const assets = [...html.text.matchAll(/(?:src|href)="(\/view\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toHaveLength(2);
    for (const asset of assets) {
      const res = await call(`${gateway.publicUrl}${asset}`, 'GET');
      expect(res.status, asset).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    }
    expect((await call(`${gateway.publicUrl}/view/assets/nothing.js`, 'GET')).status).toBe(404);
    expect(failures).toEqual([]);
  });
});
