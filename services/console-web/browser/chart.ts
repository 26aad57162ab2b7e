import { BarController, BarElement, CategoryScale, Chart, type ChartConfiguration, LinearScale, type Plugin, Tooltip } from 'chart.js';
import { contract } from './contract';
import { el, fmt } from './dom';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

export type Measure = 'credits' | 'calls';
export type Split = 'operation' | 'key';

export interface Series {
  /** The operation name or the key id: what a click on the series filters by. */
  id: string;
  label: string;
  values: number[];
}

const PALETTE = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#dc2626', '#0891b2', '#be185d', '#4d7c0f', '#7c2d12', '#475569'];
/** An operation keeps its colour by its position in the contract; keys take theirs by their order. */
const colorOf = (split: Split, id: string, index: number) =>
  split === 'operation' && contract.operations.includes(id) ? PALETTE[contract.operations.indexOf(id) % PALETTE.length]! : PALETTE[index % PALETTE.length]!;

const UNITS: Record<Measure, [string, string]> = { credits: ['credit', 'credits'], calls: ['call', 'calls'] };
const withUnit = (n: number, measure: Measure) => `${fmt(n)} ${UNITS[measure][Math.abs(n) === 1 ? 0 : 1]}`;

const monthDay = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
const dayLabel = (day: string) => monthDay.format(new Date(`${day}T00:00:00Z`));

/**
 * What the axes show, on the chart's element (`data-axes`): titles and tick labels as drawn, for
 * the browser tests and anyone inspecting the page.
 */
const axesOnElement: Plugin<'bar'> = {
  id: 'axesOnElement',
  afterLayout(chart) {
    const axis = (id: 'x' | 'y') => ({ title: String((chart.scales[id]!.options as { title?: { text?: unknown } }).title?.text ?? ''), ticks: chart.scales[id]!.ticks.map((t) => String(t.label)) });
    (chart.canvas.parentElement as HTMLElement).dataset.axes = JSON.stringify({ x: axis('x'), y: axis('y') });
  },
};

/** Coloured through the CSSOM: the pages' CSP allows no style attribute in markup. */
function swatch(color: string) {
  const box = el('span', { class: 'swatch', 'aria-hidden': 'true' });
  box.style.background = color;
  return box;
}

/**
 * Stacked bars per UTC day, one series per operation or key, with dates on the x axis and the
 * measure's unit on the y axis and in the tooltips. Each series is a button in the legend: a click
 * (on it or on its bars) calls `onSelect`.
 */
export function drawChart(
  container: HTMLElement,
  legend: HTMLElement,
  chart: { days: string[]; series: Series[]; measure: Measure; split: Split; selected?: string; onSelect: (id: string) => void },
) {
  const { days, series, measure, split } = chart;
  let canvas = container.querySelector('canvas');
  if (canvas) Chart.getChart(canvas)?.destroy();
  else container.append((canvas = el('canvas', { role: 'img' })));
  const total = series.reduce((s, x) => s + x.values.reduce((a, b) => a + b, 0), 0);
  const what = measure === 'calls' ? 'Calls' : 'Credits';
  canvas.setAttribute('aria-label', `${what} per UTC day by ${split}, ${days[0]} to ${days[days.length - 1]}: ${withUnit(total, measure)} in all.`);
  const colors = series.map((s, i) => colorOf(split, s.id, i));
  const config: ChartConfiguration<'bar', number[], string> = {
    type: 'bar',
    data: {
      labels: days,
      datasets: series.map((s, i) => ({ label: s.label, data: s.values, backgroundColor: colors[i], stack: 'all', maxBarThickness: 48 })),
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: 'index', intersect: false },
      onClick: (_event, elements) => {
        const hit = elements[0];
        if (hit) chart.onSelect(series[hit.datasetIndex]!.id);
      },
      scales: {
        x: {
          stacked: true,
          title: { display: true, text: 'Day (UTC)' },
          grid: { display: false },
          ticks: { autoSkip: true, maxRotation: 0, callback: (_v, index) => dayLabel(days[index]!) },
        },
        y: {
          stacked: true,
          beginAtZero: true,
          title: { display: true, text: what },
          ticks: { precision: 0, callback: (v) => fmt(Number(v)) },
          grid: { color: '#e2e8f0' },
        },
      },
      plugins: {
        tooltip: {
          callbacks: {
            title: (items) => `${items[0]?.label ?? ''} (UTC)`,
            label: (item) => `${item.dataset.label}: ${withUnit(Number(item.raw), measure)}`,
            footer: (items) => `Total: ${withUnit(items.reduce((s, i) => s + Number(i.raw), 0), measure)}`,
          },
          filter: (item) => Number(item.raw) !== 0,
        },
      },
    },
    plugins: [axesOnElement],
  };
  new Chart(canvas, config);
  legend.replaceChildren(
    ...series.map((s, i) =>
      el(
        'li',
        {},
        el(
          'button',
          { type: 'button', class: 'series', 'aria-pressed': String(chart.selected === s.id), title: `Show only ${s.label} in the table`, onclick: () => chart.onSelect(s.id) },
          swatch(colors[i]!),
          s.label,
        ),
      ),
    ),
  );
}
