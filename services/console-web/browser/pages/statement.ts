import { api, type Statement } from '../api';
import { $, cell, el, field, fillBody, fmt, guarded, headingsOf, labelCells } from '../dom';
import { type DayRange, monthOf, monthPeriod, stepMonth, todayUtc } from '../dates';

export async function statement() {
  const form = $<HTMLFormElement>('#statement-period');
  const showPeriod = (period: DayRange) => {
    field(form, 'from').value = period.from;
    field(form, 'to').value = period.to;
    const month = monthPeriod(monthOf(period.from));
    field(form, 'month').value = month.from === period.from && month.to === period.to ? monthOf(period.from) : '';
  };
  let shown: DayRange | null = null;
  const term = (label: string, value: number, id: string) => el('span', { class: 'term' }, el('span', { class: 'label', text: label }), ' ', el('strong', { id, text: fmt(value) }));
  const render = async (period: DayRange) => {
    const query = new URLSearchParams({ from: `${period.from}T00:00:00Z`, to: `${period.to}T00:00:00Z` });
    const s = await api<Statement>('GET', `/console/v1/statement?${query}`);
    showPeriod(period);
    $('#statement-title').textContent = `${period.from} 00:00 UTC (included) to ${period.to} 00:00 UTC (excluded)`;
    $('#opening').textContent = fmt(s.opening_balance);
    $('#granted').textContent = fmt(s.credits_granted);
    $('#charged').textContent = fmt(s.charged);
    $('#refunded').textContent = fmt(s.refunded);
    $('#closing').textContent = fmt(s.closing_balance);
    $('#calls').textContent = fmt(s.calls);
    // The service's own figures, laid out as the identity they satisfy.
    $('#identity').replaceChildren(
      term('opening', s.opening_balance, 'identity-opening'),
      ' + ',
      term('granted', s.credits_granted, 'identity-granted'),
      ' − ',
      term('charged', s.charged, 'identity-charged'),
      ' + ',
      term('refunded', s.refunded, 'identity-refunded'),
      ' = ',
      term('closing', s.closing_balance, 'identity-closing'),
    );
    fillBody(
      $<HTMLTableElement>('#statement-table'),
      s.by_operation.map((o) => el('tr', {}, cell(o.operation), cell(fmt(o.calls), 'num'), cell(fmt(o.charged), 'num'), cell(fmt(o.refunded), 'num'))),
      'No calls charged in this period.',
    );
    const total = el('tr', {}, el('th', { scope: 'row', text: 'Total' }), cell(fmt(s.calls), 'num'), cell(fmt(s.charged), 'num'), cell(fmt(s.refunded), 'num'));
    labelCells(total, headingsOf($<HTMLTableElement>('#statement-table')));
    $('#statement-table tfoot').replaceChildren(total);
    $('#entries').textContent =
      s.entries === 0 ? 'No ledger entries in this period.' : `${fmt(s.entries)} ledger ${s.entries === 1 ? 'entry' : 'entries'}, log positions ${s.first_position} to ${s.last_position}.`;
    query.set('format', 'csv');
    $<HTMLAnchorElement>('#statement-csv').href = `/console/v1/statement?${query}`;
    history.replaceState(null, '', `/console/statement?${new URLSearchParams({ ...period })}`);
    $('#statement').dataset.period = `${period.from}/${period.to}`;
    shown = period;
  };
  field(form, 'month').addEventListener('change', () => {
    const month = field(form, 'month').value;
    if (/^\d{4}-\d\d$/.test(month)) showPeriod(monthPeriod(month));
  });
  form.addEventListener(
    'submit',
    guarded(async (event: Event) => {
      event.preventDefault();
      await render({ from: field(form, 'from').value, to: field(form, 'to').value });
    }),
  );
  for (const [id, by] of [
    ['#previous-month', -1],
    ['#next-month', 1],
  ] as const) {
    $(id).addEventListener(
      'click',
      guarded(async () => render(monthPeriod(stepMonth(monthOf(shown ? shown.from : todayUtc()), by)))),
    );
  }
  const params = new URLSearchParams(location.search);
  const from = params.get('from');
  const to = params.get('to');
  await render(from && to ? { from, to } : monthPeriod(monthOf(todayUtc())));
}
