import type { Key, UsageRow } from './api';
import { drawChart, type Measure, type Split } from './chart';
import { $ } from './dom';
import { type DayRange, daysOf } from './dates';
import { seriesOf } from './usage-series';

/**
 * The usage chart of a page (pages.ts `usageChart`): its measure (credits or calls) and split
 * (per operation or per key) switches, redrawn in place; a series clicked is handed to `onSelect`.
 */
export function mountUsageChart(options: {
  rows: readonly UsageRow[];
  range: DayRange;
  keys: ReadonlyMap<string, Key>;
  selected: (split: Split) => string | undefined;
  onSelect: (split: Split, id: string) => void;
}) {
  const days = daysOf(options.range);
  const state: { measure: Measure; split: Split } = { measure: 'credits', split: 'operation' };
  const draw = () =>
    drawChart($('#chart'), $('#legend'), {
      days,
      series: seriesOf(options.rows, days, state.measure, state.split, options.keys),
      measure: state.measure,
      split: state.split,
      selected: options.selected(state.split),
      onSelect: (id) => options.onSelect(state.split, id),
    });
  const toggles = (attribute: 'measure' | 'split') => {
    const buttons = [...document.querySelectorAll<HTMLButtonElement>(`[data-${attribute}]`)];
    for (const button of buttons) {
      button.addEventListener('click', () => {
        for (const b of buttons) b.setAttribute('aria-pressed', String(b === button));
        if (attribute === 'measure') state.measure = button.dataset.measure as Measure;
        else state.split = button.dataset.split as Split;
        draw();
      });
    }
  };
  toggles('measure');
  toggles('split');
  draw();
}
