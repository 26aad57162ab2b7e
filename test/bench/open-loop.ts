// An open-loop load generator: requests leave on a fixed schedule (rate-schedule.ts) whether or not
// earlier ones have been answered, over at most `connections` keep-alive connections; a request
// that finds them all busy waits in the generator's queue, as a caller's would. Its latency runs
// from the instant it was due to the end of its answer, so queueing (in the client, the network or
// the server) counts, unlike a closed loop where a slow answer delays the next request and hides
// the wait (coordinated omission). autocannon's `overallRate` is not this: each connection sends its
// next request only after the previous answer, back to back until its quota for the second is
// spent, then pauses until the next second (node_modules/autocannon/lib/httpClient.js), so its
// load comes in bursts at the top of each second and a slow answer holds the next request back.
//
// HTTP/1.1 over plain sockets, as lean as autocannon's client: node:http's client cost ≈ 200 µs of
// CPU per request at 1,000 req/s on the 2-core machine, which shares the cores with the servers
// measured. Answers are read by Content-Length (what Fastify sends) or chunked encoding.
import net from 'node:net';
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
  /** ms each request was queued after its due instant: the generator's own lateness (its timer, its event loop, the CPU it got). */
  dispatchLags: number[];
  /** From the first due instant to the last answer: what the achieved rate is divided by. */
  elapsedSeconds: number;
  /** Why the first failed request failed (a timeout, a closed connection, an unreadable answer). */
  firstError?: string;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('\r\n0\r\n\r\n');

/** Where one HTTP/1.1 answer at the start of `data` ends and its status, or undefined while incomplete. */
export function parseAnswer(data: Buffer): { status: number; length: number } | undefined {
  const headerEnd = data.indexOf(HEADER_END);
  if (headerEnd < 0) return undefined;
  const head = data.toString('latin1', 0, headerEnd).toLowerCase();
  const status = Number(head.slice(9, 12));
  if (!head.startsWith('http/1.1 ') || !Number.isInteger(status)) throw new Error(`not an HTTP/1.1 answer: ${JSON.stringify(head.slice(0, 40))}`);
  const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
  if (length) {
    const end = headerEnd + 4 + Number(length[1]);
    return data.length >= end ? { status, length: end } : undefined;
  }
  if (/\r\ntransfer-encoding:\s*chunked/.test(head)) {
    // The last chunk: a zero size line then the empty trailer line (a body of JSON has no trailers).
    const last = data.indexOf(CHUNKED_END, headerEnd + 2);
    return last < 0 ? undefined : { status, length: last + CHUNKED_END.length };
  }
  if (status === 204 || status === 304) return { status, length: headerEnd + 4 };
  throw new Error(`an answer with neither Content-Length nor chunked encoding (status ${status})`);
}

interface Connection {
  socket: net.Socket;
  /** The request it waits on: its index and due instant. */
  current: { index: number; dueAt: number } | undefined;
  received: Buffer;
}

export async function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const target = new URL(o.url);
  const port = Number(target.port);
  const total = scheduledTotal(o.ratePerSecond, o.seconds);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const fixedHead =
    `POST ${o.path} HTTP/1.1\r\nhost: ${target.host}\r\n` +
    Object.entries(o.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') +
    `content-length: ${Buffer.byteLength(o.body)}\r\n${o.idHeader}: ${o.idPrefix}-`;
  const result: OpenLoopResult = { scheduled: total, ok2xx: 0, non2xx: 0, errors: 0, statusCounts: new Map(), latencies: [], dispatchLags: [], elapsedSeconds: 0 };
  /** Due requests waiting for a free connection: indexes, oldest first (the queue never shrinks its array; it is read from `head`). */
  const queue: number[] = [];
  let head = 0;
  let sent = 0;
  let settled = 0;
  let finished = false;
  let start = 0;
  let done: (r: OpenLoopResult) => void = () => {};
  let fail: (e: Error) => void = () => {};
  const idle: Connection[] = [];
  const connections = new Set<Connection>();

  const settle = () => {
    settled += 1;
    if (settled === total && !finished) {
      finished = true;
      result.elapsedSeconds = (performance.now() - start) / 1000;
      clearInterval(watchdog);
      for (const c of connections) c.socket.destroy();
      done(result);
    }
  };
  const answered = (status: number, dueAt: number) => {
    result.statusCounts.set(status, (result.statusCounts.get(status) ?? 0) + 1);
    if (status >= 200 && status < 300) {
      result.ok2xx += 1;
      result.latencies.push(performance.now() - dueAt);
    } else result.non2xx += 1;
    settle();
  };
  const failed = (why: string) => {
    result.firstError ??= why;
    result.errors += 1;
    settle();
  };

  const write = (c: Connection, index: number) => {
    const dueAt = start + arrivalMs(index, o.ratePerSecond);
    c.current = { index, dueAt };
    c.socket.write(`${fixedHead}${index}\r\n\r\n${o.body}`);
  };
  const dispatch = () => {
    while (head < queue.length && idle.length > 0) write(idle.pop()!, queue[head++]!);
  };
  const release = (c: Connection) => {
    c.current = undefined;
    if (head < queue.length) write(c, queue[head++]!);
    else idle.push(c);
  };

  const open = (): Promise<Connection> =>
    new Promise((opened, refused) => {
      const socket = net.connect({ host: target.hostname, port, noDelay: true });
      const c: Connection = { socket, current: undefined, received: Buffer.alloc(0) };
      let closedBecause: string | undefined;
      socket.once('connect', () => {
        // A replacement that connects after the run ended would stay open and hold the server's close up.
        if (finished) {
          socket.destroy();
          return;
        }
        connections.add(c);
        opened(c);
      });
      socket.on('data', (chunk: Buffer) => {
        c.received = c.received.length === 0 ? chunk : Buffer.concat([c.received, chunk]);
        try {
          // pipelining 1: at most one answer is due on a connection at a time.
          const answer = c.current ? parseAnswer(c.received) : undefined;
          if (!answer) return;
          c.received = c.received.subarray(answer.length);
          const { dueAt } = c.current!;
          release(c);
          answered(answer.status, dueAt);
        } catch (err) {
          socket.destroy(err as Error);
        }
      });
      socket.on('error', (err) => {
        closedBecause = err.message;
        if (!connections.has(c)) refused(err);
      });
      socket.on('close', () => {
        const wasOpen = connections.delete(c);
        const at = idle.indexOf(c);
        if (at >= 0) idle.splice(at, 1);
        if (!wasOpen || finished) return;
        // The request it carried is lost; another connection takes its place for the rest.
        if (c.current) failed(closedBecause ?? 'the server closed the connection');
        if (!finished) open().then(release, (err: Error) => fail(err));
      });
    });

  // A request due more than timeoutMs ago and still queued or unanswered counts as an error.
  const watchdog = setInterval(() => {
    const now = performance.now();
    while (head < queue.length && start + arrivalMs(queue[head]!, o.ratePerSecond) + timeoutMs < now) {
      head += 1;
      failed(`still waiting for a free connection ${timeoutMs} ms after it was due`);
    }
    for (const c of connections) if (c.current && c.current.dueAt + timeoutMs < now) c.socket.destroy(new Error(`no answer ${timeoutMs} ms after it was due`));
  }, 100);

  try {
    for (let i = 0; i < o.connections; i++) idle.push(await open());
  } catch (err) {
    clearInterval(watchdog);
    for (const c of connections) c.socket.destroy();
    throw err;
  }
  return new Promise((resolve, reject) => {
    done = resolve;
    fail = (err) => {
      finished = true;
      clearInterval(watchdog);
      for (const c of connections) c.socket.destroy();
      reject(err);
    };
    start = performance.now();
    // Each tick queues every request due by now, then sleeps until the next one is due (at least 1 ms).
    const tick = () => {
      const elapsed = performance.now() - start;
      const due = dueArrivals(o.ratePerSecond, elapsed, total);
      for (; sent < due; sent++) {
        queue.push(sent);
        result.dispatchLags.push(elapsed - arrivalMs(sent, o.ratePerSecond));
      }
      dispatch();
      if (sent < total) setTimeout(tick, Math.max(1, arrivalMs(sent, o.ratePerSecond) - (performance.now() - start)));
    };
    tick();
  });
}
