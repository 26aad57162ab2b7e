/** Pure shaping of the console's numbers: they are sums of the admin API's own rows, nothing else. */

export interface UsageRowIn {
  day: string;
  key_id: string;
  operation: string;
  calls: number;
  credits_charged: number;
  credits_refunded: number;
  errors: number;
}

export const CHART_DAYS = 30;

const DAY_MS = 86_400_000;
export const utcDay = (d: Date) => d.toISOString().slice(0, 10);
export const addDays = (day: string, n: number) => utcDay(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS));
export const monthStart = (day: string) => `${day.slice(0, 7)}-01`;

/** Credits a row cost: charged minus refunded (usage days are UTC days, as the admin API's). */
export const netCredits = (r: Pick<UsageRowIn, 'credits_charged' | 'credits_refunded'>) => Number(r.credits_charged) - Number(r.credits_refunded);

/** The first day the overview needs: the chart's 30 days or the month, whichever starts first. */
export function overviewFrom(today: string): string {
  const chartStart = addDays(today, -(CHART_DAYS - 1));
  const month = monthStart(today);
  // biome-ignore lint/complexity/useMathMinMax: ISO dates compared as strings, not numbers
  return chartStart < month ? chartStart : month;
}

export interface Overview {
  spent_today: number;
  spent_this_month: number;
  /** One entry per day of the last 30 (oldest first), per operation with any call or credit. */
  days: { day: string; operations: { operation: string; calls: number; credits: number }[] }[];
}

export function overviewOf(rows: readonly UsageRowIn[], today: string): Overview {
  const month = monthStart(today);
  const chartStart = addDays(today, -(CHART_DAYS - 1));
  let spentToday = 0;
  let spentMonth = 0;
  const byDay = new Map<string, Map<string, { calls: number; credits: number }>>();
  for (const r of rows) {
    const credits = netCredits(r);
    if (r.day === today) spentToday += credits;
    if (r.day >= month && r.day <= today) spentMonth += credits;
    if (r.day < chartStart || r.day > today) continue;
    const ops = byDay.get(r.day) ?? new Map<string, { calls: number; credits: number }>();
    const op = ops.get(r.operation) ?? { calls: 0, credits: 0 };
    op.calls += Number(r.calls);
    op.credits += credits;
    ops.set(r.operation, op);
    byDay.set(r.day, ops);
  }
  const days = [];
  for (let i = 0; i < CHART_DAYS; i++) {
    const day = addDays(chartStart, i);
    const ops = byDay.get(day) ?? new Map();
    days.push({ day, operations: [...ops].sort(([a], [b]) => a.localeCompare(b)).map(([operation, v]) => ({ operation, ...v })) });
  }
  return { spent_today: spentToday, spent_this_month: spentMonth, days };
}
