// kafkajs 2.2.4 rescheduled its pending-request check every 1 ms for as long as a connection was
// open, and Node 24 warned about the negative delay (TimeoutNegativeWarning): the relay burned CPU
// idle. patches/kafkajs+2.2.4.patch (applied by `npm ci`'s postinstall) schedules only when a
// request waits. These tests fail if the patch is not applied.
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';

interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: unknown;
  checkPendingRequests(): void;
  destroy(): void;
}
type RequestQueueClass = new (options: Record<string, unknown>) => RequestQueue;

const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as RequestQueueClass;
const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };

let queue: RequestQueue | undefined;
afterEach(() => queue?.destroy());

function idleQueue(): RequestQueue {
  queue = new RequestQueue({ maxInFlightRequests: null, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'localhost:9092', logger: quietLogger });
  return queue;
}

describe('kafkajs request queue (patched)', () => {
  it('given nothing pending and no throttle, when the queue is checked, then no later check is scheduled', () => {
    const q = idleQueue();
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('given a request pending behind a throttle, when the queue is checked, then a later check is scheduled', () => {
    const q = idleQueue();
    q.throttledUntil = Date.now() + 60_000;
    q.pending.push({ correlationId: 1 });
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    q.pending.length = 0;
  });
});
