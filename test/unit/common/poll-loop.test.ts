import { describe, expect, it } from 'vitest';
import type { Logger } from '../../../services/common/log';
import { startPollLoop } from '../../../services/common/poll-loop';

function recordingLogger() {
  const warnings: { fields: Record<string, unknown>; message?: string }[] = [];
  const logger: Logger = { info() {}, error() {}, warn: (fields, message) => warnings.push({ fields: fields as Record<string, unknown>, message }) };
  return { logger, warnings };
}

describe('startPollLoop', () => {
  it('given a pass running, when the loop is stopped, then stop resolves only once that pass ended and no pass follows', async () => {
    let passes = 0;
    let release!: () => void;
    let seenStopped: (() => boolean) | undefined;
    const loop = startPollLoop({
      pass: (stopped) => {
        passes++;
        seenStopped = stopped;
        return new Promise<void>((resolve) => (release = resolve));
      },
      everyMs: 0,
      logger: recordingLogger().logger,
      failed: 'pass failed',
    });
    let stoppedAll = false;
    const stopping = loop.stop().then(() => (stoppedAll = true));
    await new Promise((r) => setImmediate(r));
    expect(stoppedAll).toBe(false);
    expect(seenStopped?.()).toBe(true);
    release();
    await stopping;
    await new Promise((r) => setTimeout(r, 5));
    expect(passes).toBe(1);
  });

  it('given a pass failing the same way again and again, when 21 passes failed, then the first and the 21st are logged, with the count', async () => {
    const { logger, warnings } = recordingLogger();
    let passes = 0;
    let reached!: () => void;
    const twentyOne = new Promise<void>((resolve) => (reached = resolve));
    const loop = startPollLoop({
      pass: async () => {
        if (++passes === 21) reached();
        throw new Error('database unavailable');
      },
      everyMs: 0,
      logger,
      failed: 'pass failed; the next pass retries',
    });
    await twentyOne;
    await loop.stop();
    expect(warnings.map((w) => [w.message, w.fields.repeated, (w.fields.err as Error).message])).toEqual([
      ['pass failed; the next pass retries', 1, 'database unavailable'],
      ['pass failed; the next pass retries', 21, 'database unavailable'],
    ]);
  });
});
