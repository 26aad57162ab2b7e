import { api, type UsageRow } from '../api';
import { $, cell, el, field, fillBody, fmt, headingsOf, labelCells } from '../dom';
import { describeRange, rangePicker } from '../dates';
import { keyLabel, keyName, loadKeys } from '../keys';
import { mountUsageChart } from '../usage-chart';

const FILTERS = ['key_id', 'operation'] as const;

export async function usage() {
  const form = $<HTMLFormElement>('#usage-filters');
  const params = new URLSearchParams(location.search);
  const keys = await loadKeys();
  const select = field(form, 'key_id') as unknown as HTMLSelectElement;
  for (const k of keys.values()) select.append(el('option', { value: k.id, text: `${keyLabel(keys, k.id)} (${k.prefix}…)`, title: k.id }));
  for (const name of FILTERS) if (params.get(name)) field(form, name).value = params.get(name)!;
  const range = rangePicker(form, params, 30);
  // The filters go in the address (a reload or a link shows the same), without the empty ones.
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const asked = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (typeof value === 'string' && value !== '') asked.set(name, value);
    location.assign(`/console/usage?${asked}`);
  });
  const query = new URLSearchParams({ ...range });
  for (const name of FILTERS) if (field(form, name).value) query.set(name, field(form, name).value);
  const { data } = await api<{ data: UsageRow[] }>('GET', `/console/v1/usage?${query}`);
  $('#chart-range').textContent = describeRange(range);

  // A series clicked filters the table (and the chart) to it; clicked again, the filter goes.
  const filterOf = { operation: 'operation', key: 'key_id' } as const;
  mountUsageChart({
    rows: data,
    range,
    keys,
    selected: (split) => query.get(filterOf[split]) ?? undefined,
    onSelect: (split, id) => {
      const name = filterOf[split];
      field(form, name).value = query.get(name) === id ? '' : id;
      form.requestSubmit();
    },
  });

  fillBody(
    $<HTMLTableElement>('#usage-table'),
    data.map((r) =>
      el(
        'tr',
        {},
        cell(r.day),
        cell(keyName(keys, r.key_id)),
        cell(r.operation),
        cell(fmt(r.calls), 'num'),
        cell(fmt(r.credits_charged), 'num'),
        cell(fmt(r.credits_refunded), 'num'),
        cell(fmt(r.errors), 'num'),
      ),
    ),
    'No usage for these filters.',
  );
  const sum = (f: 'calls' | 'credits_charged' | 'credits_refunded' | 'errors') => data.reduce((s, r) => s + Number(r[f]), 0);
  const total = el(
    'tr',
    {},
    el('th', { scope: 'row', colspan: '3', text: 'Total' }),
    cell(fmt(sum('calls')), 'num total-calls'),
    cell(fmt(sum('credits_charged')), 'num total-charged'),
    cell(fmt(sum('credits_refunded')), 'num total-refunded'),
    cell(fmt(sum('errors')), 'num total-errors'),
  );
  labelCells(total, headingsOf($<HTMLTableElement>('#usage-table')));
  $('#usage-table tfoot').replaceChildren(total);
}
