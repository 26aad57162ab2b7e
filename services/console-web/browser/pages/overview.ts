import { api, type Overview, type UsageRow } from '../api';
import { $, cell, el, field, fillBody, fmt, guarded, showStatus, when } from '../dom';
import { describeRange, rangePicker } from '../dates';
import { keyName, loadKeys } from '../keys';
import { mountUsageChart } from '../usage-chart';
import { requestLink } from './request';

export async function overview() {
  const form = $<HTMLFormElement>('#chart-period');
  const range = rangePicker(form, new URLSearchParams(location.search), 30);
  const [data, keys, usage] = await Promise.all([
    api<Overview>('GET', '/console/v1/overview'),
    loadKeys(),
    api<{ data: UsageRow[] }>('GET', `/console/v1/usage?${new URLSearchParams({ ...range })}`),
  ]);
  $('#balance').textContent = fmt(data.balance);
  $('#spent-today').textContent = fmt(data.spent_today);
  $('#spent-month').textContent = fmt(data.spent_this_month);
  $('#chart-range').textContent = describeRange(range);
  // A series clicked opens Usage, filtered to it over the same period.
  mountUsageChart({
    rows: usage.data,
    range,
    keys,
    selected: () => undefined,
    onSelect: (split, id) => location.assign(`/console/usage?${new URLSearchParams({ [split === 'key' ? 'key_id' : 'operation']: id, ...range })}`),
  });
  fillBody(
    $<HTMLTableElement>('#errors-table'),
    data.recent_errors.map((e) =>
      el('tr', {}, cell(when(e.recorded_at)), cell(requestLink(e.request_id)), cell(keyName(keys, e.key_id)), cell(e.operation), cell(e.error_code)),
    ),
    'No errors.',
  );
  const refused = data.last_insufficient_credits;
  if (refused) {
    $('#refused-banner').textContent = `A call was refused for lack of credits (402) at ${when(refused.refused_at)} UTC: ${refused.path}, request ${refused.request_id}. Balance now: ${fmt(data.balance)}.`;
    $('#refused-banner').hidden = false;
  }
  showHooksBanner(data);
  // Owners only: loadSession removed the form for a member.
  const alertForm = document.querySelector<HTMLFormElement>('#alert-form');
  if (alertForm) {
    field(alertForm, 'threshold').value = data.low_balance_threshold === null ? '' : String(data.low_balance_threshold);
    alertForm.addEventListener(
      'submit',
      guarded(async (event: Event) => {
        event.preventDefault();
        const value = field(alertForm, 'threshold').value.trim();
        await api('PATCH', '/console/v1/alerts', { low_balance_threshold: value === '' ? null : Number(value) });
        showStatus(value === '' ? 'Low-balance alert removed.' : `Owners are emailed when the balance falls below ${fmt(Number(value))}.`);
      }),
    );
  }
}

/** The push side needing a look, as the 402's banner: failing webhook endpoints, paused watches. */
function showHooksBanner(data: Overview) {
  const banner = $('#hooks-banner');
  const parts: (Node | string)[] = [];
  for (const e of data.failing_webhook_endpoints) {
    parts.push(`The webhook endpoint ${e.url} is failing since ${when(e.failing_since)} UTC: a delivery was given up. `);
    parts.push(el('a', { href: `/console/webhooks?${new URLSearchParams({ endpoint: e.id })}`, text: 'See its deliveries' }), '. ');
  }
  const paused = data.paused_watches.length;
  if (paused > 0) {
    parts.push(`${paused} watch${paused === 1 ? ' is' : 'es are'} paused: the balance cannot pay a refresh (they resume by themselves once it can). `);
    parts.push(el('a', { href: '/console/webhooks', text: 'See the watches' }), '.');
  }
  if (parts.length === 0) return;
  banner.replaceChildren(...parts);
  banner.hidden = false;
}
