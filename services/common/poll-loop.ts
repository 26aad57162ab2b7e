import { everyNthError, type Logger } from './log';

export interface PollLoop {
  /** No pass starts after this; resolves once the running one (if any) has ended. */
  stop(): Promise<void>;
}

/**
 * The one loop of the background workers (watches, webhook deliveries, the email outbox): a pass,
 * then `everyMs` after it ends the next, so passes never overlap. A failed pass is logged (the
 * first of a run of the same error, then every 20th: a dependency that is out would otherwise
 * log every poll) and the next pass retries. The timer does not keep the process up by itself.
 * A pass is told when the loop was stopped, to end early between items.
 */
export function startPollLoop(options: { pass: (stopped: () => boolean) => Promise<unknown>; everyMs: number; logger: Logger; failed: string }): PollLoop {
  const logFailure = everyNthError(options.logger, options.failed);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const loop = () => {
    if (stopped) return;
    running = options
      .pass(() => stopped)
      .then(() => undefined, logFailure)
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, options.everyMs).unref();
      });
  };
  loop();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
