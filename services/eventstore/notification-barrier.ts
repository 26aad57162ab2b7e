import { randomBytes } from 'node:crypto';

/**
 * "Has every notification committed before now reached this listener?", answered without reading
 * any table: the listener NOTIFYs its own channel and waits for that token to come back.
 * PostgreSQL delivers notifications of different transactions in the order they committed, so
 * once the token is back, so is everything committed before it was sent.
 *
 * Callers share barriers: those arriving before one is sent wait for it, and one is sent at most
 * every `minIntervalMs`, so however many callers there are the database sees a bounded rate of
 * NOTIFY statements.
 */
export class NotificationBarrier {
  private readonly prefix = randomBytes(8).toString('hex');
  private sequence = 0;
  private readonly waiting = new Map<string, () => void>();
  /** The barrier not sent yet: callers join it. */
  private next?: Promise<boolean>;
  /** Settles (never rejects) when the last barrier sent has come back, failed or timed out. */
  private previous: Promise<unknown> = Promise.resolve();
  private lastSentAt = Number.NEGATIVE_INFINITY;

  constructor(
    /** Commits a NOTIFY of `token` on the listened channel. */
    private readonly notify: (token: string) => Promise<void>,
    private readonly options: { minIntervalMs: number; timeoutMs: number },
  ) {}

  /**
   * True once every notification committed before this call has been delivered; false when the
   * token did not come back within `timeoutMs` (the listening connection may be stuck). Rejects
   * with the NOTIFY's error (database unreachable).
   */
  pass(): Promise<boolean> {
    this.next ??= this.sendNext();
    return this.next;
  }

  /** For the channel's handler: true when `payload` is one of this barrier's tokens (then it is consumed). */
  echoed(payload: string): boolean {
    const arrived = this.waiting.get(payload);
    if (!arrived) return false;
    this.waiting.delete(payload);
    arrived();
    return true;
  }

  /** Whether `payload` looks like any instance's barrier token, to be ignored by the channel's other handlers. */
  static isToken(payload: string): boolean {
    return TOKEN.test(payload);
  }

  private async sendNext(): Promise<boolean> {
    await this.previous;
    const wait = this.lastSentAt + this.options.minIntervalMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref());
    // Whoever calls from here on arrived after this one was sent, so needs the next.
    this.next = undefined;
    this.lastSentAt = Date.now();
    const sent = this.sendAndAwait(`barrier:${this.prefix}:${this.sequence++}`);
    this.previous = sent.catch(() => undefined);
    return sent;
  }

  private async sendAndAwait(token: string): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const back = new Promise<boolean>((resolve) => {
      this.waiting.set(token, () => resolve(true));
      timer = setTimeout(() => resolve(false), this.options.timeoutMs).unref();
    });
    try {
      await this.notify(token);
      return await back;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(token);
    }
  }
}

const TOKEN = /^barrier:[0-9a-f]{16}:\d+$/;
