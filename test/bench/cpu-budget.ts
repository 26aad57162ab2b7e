// What a throughput target (docs/performance.md) leaves for the service's own CPU, from one run's measured figures.
//
// The load generator, the service, PostgreSQL and Redis all run on the same cores. A throughput
// target (a ratio to bare Fastify) fixes how many hits a second the cores must serve, hence how much
// CPU one hit may cost in all, even with every core busy all the time; what the load generator and
// the servers take of it per hit is measured; the rest is what the service may spend. The bare
// route's own CPU per request is the floor of any route that reads the same request and sends the
// same body: a budget below it cannot be met by any service.

/** A scenario's figures per request, µs of CPU (from /proc and process.cpuUsage). */
export interface MeasuredHit {
  service: number;
  /** PostgreSQL's processes; 0 where the database runs inside the service (PGlite). */
  database: number;
  redis: number;
  loadGenerator: number;
}

export interface Budget {
  /** µs of CPU one hit may cost, every process together. */
  perHit: number;
  /** What the load generator and the servers other than the service take of it. */
  others: number;
  /** perHit - others: what the service may spend per hit. */
  leftForService: number;
  /** When the service must do the hit in one thread (PGlite runs in it): what that thread may spend. */
  oneThread?: number;
}

/** Throughput `ratio` × `bareRequestsPerSecond` on `cores` cores. */
export function throughputBudget(ratio: number, bareRequestsPerSecond: number, cores: number, hit: MeasuredHit, oneThread = false): Budget {
  const hitsPerSecond = ratio * bareRequestsPerSecond;
  const perHit = (cores * 1e6) / hitsPerSecond;
  const others = hit.loadGenerator + hit.database + hit.redis;
  return { perHit, others, leftForService: perHit - others, ...(oneThread ? { oneThread: 1e6 / hitsPerSecond } : {}) };
}

/** Server CPU per hit at most `ratio` × the bare route's: the servers other than the service count, the load generator does not. */
export function serverCpuBudget(ratio: number, bareServiceUs: number, hit: MeasuredHit): Budget {
  const perHit = ratio * bareServiceUs;
  const others = hit.database + hit.redis;
  return { perHit, others, leftForService: perHit - others };
}

/** Whether the service could fit the budget, and by how much it would have to shrink. */
export function verdict(budget: Budget, serviceUs: number, bareServiceUs: number): string {
  const allowed = Math.min(budget.leftForService, budget.oneThread ?? Infinity);
  if (allowed < bareServiceUs) return `out of reach: less than the bare route's own ${Math.round(bareServiceUs)} µs`;
  if (allowed < serviceUs) return `only if the service fell from ${Math.round(serviceUs)} to ${Math.round(allowed)} µs per hit (÷${(serviceUs / allowed).toFixed(1)})`;
  return 'within the budget';
}
