import { api, type LedgerPage } from '../api';
import { $, cell, el, field, fillBody, fmt, guarded, when } from '../dom';
import { addDays, monthStart, todayUtc } from '../dates';
import { keyName, loadKeys } from '../keys';
import { requestLink } from './request';

export async function ledger() {
  const table = $<HTMLTableElement>('#ledger-table');
  const keys = await loadKeys();
  let after = 0;
  let next: number | null = null;
  const render = async () => {
    const query = new URLSearchParams({ limit: '50' });
    if (after) query.set('after', String(after));
    const page = await api<LedgerPage>('GET', `/console/v1/ledger?${query}`);
    next = page.next;
    $<HTMLButtonElement>('#ledger-next').disabled = next === null;
    fillBody(
      table,
      page.data.map((e) =>
        el(
          'tr',
          {},
          cell(e.position, 'num'),
          cell(when(e.recorded_at)),
          cell(e.type),
          cell(e.operation),
          cell(requestLink(e.request_id)),
          cell(keyName(keys, e.key_id)),
          cell(e.credits > 0 ? `+${fmt(e.credits)}` : fmt(e.credits), 'num'),
          cell(fmt(e.balance_after), 'num'),
        ),
      ),
      'No entries.',
    );
  };
  $('#ledger-next').addEventListener(
    'click',
    guarded(async () => {
      if (next === null) return;
      after = next;
      await render();
    }),
  );
  $('#ledger-first').addEventListener(
    'click',
    guarded(async () => {
      after = 0;
      await render();
    }),
  );
  // The CSV of a period of UTC days, [from, to): by default this month so far, today included.
  const csv = $<HTMLFormElement>('#ledger-csv');
  const today = todayUtc();
  field(csv, 'from').value = monthStart(today);
  field(csv, 'to').value = addDays(today, 1);
  csv.addEventListener('submit', (event) => {
    event.preventDefault();
    location.assign(`/console/v1/ledger.csv?${new URLSearchParams({ from: field(csv, 'from').value, to: field(csv, 'to').value })}`);
  });
  await render();
}
