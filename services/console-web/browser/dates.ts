import { addDays, monthStart, utcDay } from '../../members/overview';
import { field } from './dom';

/**
 * Days are UTC days (`YYYY-MM-DD`) and every period is half-open, `[from, to)`: `from` is
 * included, `to` is not, as in the admin API's statement. The pickers say so in their labels.
 */
export interface DayRange {
  from: string;
  to: string;
}

export { addDays, monthStart, utcDay };
export const todayUtc = () => utcDay(new Date());
const isDay = (s: string | null): s is string => s !== null && /^\d{4}-\d\d-\d\d$/.test(s);

/** The last `n` UTC days, today included: `[today − n + 1, tomorrow)`. */
const lastDays = (n: number): DayRange => ({ from: addDays(todayUtc(), -(n - 1)), to: addDays(todayUtc(), 1) });

/** The month (`YYYY-MM`) a day is in. */
export const monthOf = (day: string) => day.slice(0, 7);

/** A calendar month (`YYYY-MM`) of UTC days, half-open: its first day to the next month's first day. */
export function monthPeriod(month: string): DayRange {
  const [year, index] = month.split('-').map(Number) as [number, number];
  return { from: utcDay(new Date(Date.UTC(year, index - 1, 1))), to: utcDay(new Date(Date.UTC(year, index, 1))) };
}

/** The month `by` months after (before, when negative) `month`. */
export function stepMonth(month: string, by: number): string {
  const [year, index] = month.split('-').map(Number) as [number, number];
  return monthOf(utcDay(new Date(Date.UTC(year, index - 1 + by, 1))));
}

/** Every day of the range, in order. */
export function daysOf(range: DayRange): string[] {
  const days: string[] = [];
  for (let day = range.from; day < range.to && days.length < 3700; day = addDays(day, 1)) days.push(day);
  return days;
}

export const describeRange = (r: DayRange) => `${r.from} to ${r.to} (UTC days, ${r.to} excluded)`;

/**
 * The period picker of a filter form (pages.ts `rangePicker`): the address's `from`/`to`, else
 * the last `defaultDays`. A preset button fills both days and submits the form.
 */
export function rangePicker(form: HTMLFormElement, params: URLSearchParams, defaultDays: number): DayRange {
  const asked = { from: params.get('from'), to: params.get('to') };
  const range = isDay(asked.from) && isDay(asked.to) && asked.from < asked.to ? { from: asked.from, to: asked.to } : lastDays(defaultDays);
  field(form, 'from').value = range.from;
  field(form, 'to').value = range.to;
  for (const button of form.querySelectorAll<HTMLButtonElement>('[data-days]')) {
    const preset = lastDays(Number(button.dataset.days));
    button.setAttribute('aria-pressed', String(preset.from === range.from && preset.to === range.to));
    button.addEventListener('click', () => {
      field(form, 'from').value = preset.from;
      field(form, 'to').value = preset.to;
      form.requestSubmit();
    });
  }
  return range;
}
