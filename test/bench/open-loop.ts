// An open-loop load generator: requests leave on a fixed schedule (rate-schedule.ts) whether or not
// earlier ones have been answered, over at most `connections` keep-alive connections; a request
// that finds them all busy waits in the client's queue, as a caller's would. Its latency runs from
// the instant it was due to the end of its answer, so queueing (in the client, the network or the
// server) counts, unlike a closed loop where a slow answer delays the next request and hides the
// wait (coordinated omission). autocannon's `overallRate` is not this: each connection sends its
// next request only after the previous answer, back to back until its quota for the second is
// spent, then pauses until the next second (node_modules/autocannon/lib/httpClient.js), so its
// load comes in bursts at the top of each second and a slow answer holds the next request back.
import http from 'node:http';
import { arrivalMs, dueArrivals, scheduledTotal } from './rate-schedule';

export interface OpenLoopOptions {
  url: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  ratePerSecond: number;
  connections: number;
  seconds: number;
  /** Each request's own id goes in this header (`<prefix>-<index>`): an Idempotency-Key or an inert header. */
  idHeader: string;
  idPrefix: string;
  /** Per request, from the instant it was due; a request still unanswered then counts as an error. */
  timeoutMs?: number;
}

export interface OpenLoopResult {
  scheduled: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  statusCounts: Map<number, number>;
  /** ms from each 2xx request's due instant to the end of its answer, in completion order. */
  latencies: number[];
  /** ms each request left the generator after its due instant (the generator's own lateness). */
  dispatchLags: number[];
  /** From the first due instant to the last answer: what the achieved rate is divided by. */
  elapsedSeconds: number;
}

export function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const target = new URL(o.url);
  const total = scheduledTotal(o.ratePerSecond, o.seconds);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.connections, maxFreeSockets: o.connections, scheduling: 'fifo' });
  const baseHeaders = { ...o.headers, 'content-length': String(Buffer.byteLength(o.body)) };
  const result: OpenLoopResult = { scheduled: total, ok2xx: 0, non2xx: 0, errors: 0, statusCounts: new Map(), latencies: [], dispatchLags: [], elapsedSeconds: 0 };
  let sent = 0;
  let settled = 0;
  let lastAnswerAt = 0;
  const start = performance.now();

  return new Promise((done) => {
    const settle = () => {
      settled += 1;
      lastAnswerAt = performance.now();
      if (settled === total) {
        agent.destroy();
        result.elapsedSeconds = (lastAnswerAt - start) / 1000;
        done(result);
      }
    };
    const send = (index: number) => {
      const dueAt = start + arrivalMs(index, o.ratePerSecond);
      result.dispatchLags.push(performance.now() - dueAt);
      let finished = false;
      const finish = (status: number | undefined) => {
        if (finished) return;
        finished = true;
        if (status === undefined) result.errors += 1;
        else {
          result.statusCounts.set(status, (result.statusCounts.get(status) ?? 0) + 1);
          if (status >= 200 && status < 300) {
            result.ok2xx += 1;
            result.latencies.push(performance.now() - dueAt);
          } else result.non2xx += 1;
        }
        settle();
      };
      const request = http.request(
        { agent, host: target.hostname, port: target.port, method: 'POST', path: o.path, headers: { ...baseHeaders, [o.idHeader]: `${o.idPrefix}-${index}` } },
        (response) => {
          response.on('data', () => {});
          response.on('end', () => finish(response.statusCode));
          response.on('error', () => finish(undefined));
        },
      );
      // From the due instant, queueing in the agent included.
      const timer = setTimeout(() => request.destroy(new Error('timed out')), Math.max(1, dueAt + timeoutMs - performance.now()));
      request.on('close', () => clearTimeout(timer));
      request.on('error', () => finish(undefined));
      request.end(o.body);
    };
    // A 1 ms tick: at 4,000 req/s about 4 requests leave together, each timed from its own due instant.
    const tick = () => {
      const due = dueArrivals(o.ratePerSecond, performance.now() - start, total);
      while (sent < due) send(sent++);
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
}
