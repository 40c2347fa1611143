import { formatCountdown, formatOverUnder, isLight } from './format.js';
import { PARTS, type ViewerOptions } from './options.js';
import type { Screen, ShowState } from './screen.js';
import type { Trouble } from './connection.js';

const LABELS: Record<ShowState, string> = { 'pre-show': 'Pre-show', running: 'On air', paused: 'Paused', ended: 'Ended' };
const PLACEHOLDERS: Record<ShowState, string> = { 'pre-show': 'Starting soon', running: '', paused: '', ended: 'Show ended' };

/** What a refusal means to the people in the room, by the API's code. */
function refusalText(code: string): string {
  switch (code) {
    case 'auth.token_revoked':
      return 'This screen’s token was revoked.';
    case 'auth.token_expired':
      return 'This screen’s token has expired.';
    case 'rundowns.not_found':
      return 'This rundown does not exist, or this token cannot see it.';
    case 'auth.token_missing':
      return 'This screen has no token.';
    default:
      return 'This screen’s token was refused.';
  }
}

function element(doc: Document, role: string): HTMLElement {
  const found = doc.querySelector<HTMLElement>(`[data-role="${role}"]`);
  if (!found) throw new Error(`the page has no [data-role="${role}"]`);
  return found;
}

/** Sets an attribute, or removes it for null; only when it changes. */
function attribute(el: Element, name: string, value: string | null): void {
  if (value === null) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

function text(el: Element, value: string): void {
  if (el.textContent !== value) el.textContent = value;
}

/**
 * The page's DOM (index.html) driven from a Screen. Writes only what changed. Hooks (docs/api-decisions.md#viewer):
 * `data-state` on the root, `data-role` on the parts; `message` exists only while shown.
 */
export class View {
  private readonly root: HTMLElement;
  private readonly el;
  private readonly messageSlot: HTMLElement;
  private message: HTMLElement | undefined;
  private readonly current: HTMLElement;
  private readonly bar: HTMLElement;
  /** The colours last set through the CSSOM (it reads them back normalized, so compare with these). */
  private currentColor: string | null = null;
  private messageColor: string | null = null;

  constructor(
    private readonly doc: Document,
    private readonly options: ViewerOptions,
  ) {
    this.root = doc.documentElement;
    this.el = {
      state: element(doc, 'state-label'),
      clock: element(doc, 'clock'),
      title: element(doc, 'current-title'),
      subtitle: element(doc, 'current-subtitle'),
      countdown: element(doc, 'countdown'),
      progress: element(doc, 'progress'),
      next: element(doc, 'next-title'),
      overUnder: element(doc, 'over-under'),
      overUnderLabel: element(doc, 'over-under-label'),
      notice: element(doc, 'notice'),
    };
    this.messageSlot = doc.querySelector<HTMLElement>('.message-slot')!;
    this.current = this.el.title.parentElement!;
    this.bar = this.el.progress.querySelector<HTMLElement>('.bar')!;
    attribute(this.root, 'data-theme', options.theme);
    attribute(this.root, 'data-mirror', options.mirror === 'none' ? null : options.mirror);
    for (const part of PARTS) {
      for (const el of doc.querySelectorAll<HTMLElement>(`[data-part="${part}"]`)) el.hidden = !options.parts.has(part);
    }
  }

  /** The root's `data-state`. */
  set state(state: ShowState | 'offline' | 'unauthorized') {
    attribute(this.root, 'data-state', state);
  }

  render(screen: Screen, clock: string, progressAhead: { value: number; inMs: number } | null): void {
    text(this.el.state, LABELS[screen.state]);
    text(this.el.clock, clock);
    text(this.el.title, screen.currentTitle);
    attribute(this.el.title, 'data-placeholder', PLACEHOLDERS[screen.state]);
    text(this.el.subtitle, screen.currentSubtitle);
    attribute(this.current, 'data-color', screen.currentColor);
    if (screen.currentColor !== this.currentColor) {
      this.currentColor = screen.currentColor;
      this.current.style.borderLeftColor = screen.currentColor ?? '';
    }

    const countdown = screen.remainingMs === null ? '' : formatCountdown(screen.remainingMs);
    text(this.el.countdown, countdown);
    attribute(this.el.countdown, 'data-over', countdown.startsWith('-') ? '' : null);
    // Sized by its widest text: the longer of now and the cue's duration, so it does not grow at 9:59.
    const widest = Math.max(countdown.length, screen.durationMs === null ? 0 : formatCountdown(screen.durationMs).length);
    attribute(this.el.countdown, 'data-chars', String(Math.min(9, Math.max(4, widest))));

    this.renderProgress(screen, progressAhead);
    text(this.el.next, screen.nextTitle);

    const overUnder = screen.overUnderMs === null ? '' : formatOverUnder(screen.overUnderMs);
    text(this.el.overUnder, overUnder);
    const verdict = overUnder === '' ? null : overUnder.startsWith('+') ? 'late' : overUnder.startsWith('-') ? 'early' : 'on-time';
    attribute(this.el.overUnder, 'data-over-under', verdict);
    text(this.el.overUnderLabel, verdict === 'late' ? 'Over' : verdict === 'early' ? 'Under' : 'Over/under');

    this.renderMessage(screen.message);
  }

  /**
   * The bar moves smoothly: each render sets where it will be at the next one and a linear transition
   * of that length (the compositor animates it; no per-frame work here).
   */
  private renderProgress(screen: Screen, ahead: { value: number; inMs: number } | null): void {
    const now = screen.progress ?? 0;
    attribute(this.el.progress, 'data-over', screen.remainingMs !== null && screen.remainingMs < 0 && screen.progress !== null ? '' : null);
    // Where it is now, at once; then, while counting, a glide to where it will be at the next render.
    this.bar.style.transition = 'none';
    this.bar.style.transform = `scaleX(${now})`;
    if (!ahead || !screen.counting || ahead.value === now) return;
    void this.bar.offsetWidth; // commit the jump before the transition starts
    this.bar.style.transition = `transform ${ahead.inMs}ms linear`;
    this.bar.style.transform = `scaleX(${ahead.value})`;
  }

  private renderMessage(message: Screen['message']): void {
    if (!message || !this.options.parts.has('message')) {
      this.message?.remove();
      this.message = undefined;
      this.messageColor = null;
      return;
    }
    if (!this.message) {
      this.message = this.doc.createElement('p');
      this.message.className = 'message';
      this.message.setAttribute('data-role', 'message');
      this.message.setAttribute('role', 'status');
      this.messageSlot.append(this.message);
    }
    text(this.message, message.text);
    if (this.messageColor !== message.color) {
      this.messageColor = message.color;
      this.message.style.color = message.color;
    }
    attribute(this.message, 'data-contrast', isLight(message.color) ? 'dark' : 'light');
    attribute(this.message, 'data-bold', message.bold ? '' : null);
    attribute(this.message, 'data-underline', message.underline ? '' : null);
  }

  /** The banner (offline) or the full-screen notice (refused); null clears it. */
  trouble(trouble: Trouble | null): void {
    const [title, detail] = this.el.notice.querySelectorAll('p');
    if (!trouble) {
      this.el.notice.hidden = true;
      return;
    }
    if (trouble.kind === 'refused') {
      text(title!, refusalText(trouble.code));
      text(detail!, `Ask for a new viewer link: a VIEW token for this rundown, opened as …/view/<rundown id>#token=<token>. (${trouble.code}: ${trouble.detail})`);
    } else {
      text(title!, 'Reconnecting…');
      text(detail!, trouble.reason);
    }
    this.el.notice.hidden = false;
  }
}
