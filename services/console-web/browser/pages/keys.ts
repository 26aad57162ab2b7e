import { api, type Key, type KeyCreated, type KeyRevoked } from '../api';
import { $, actionButton, cell, copy, el, field, fillBody, guarded, ifConfirmed, showStatus, when } from '../dom';
import { keyLabel, loadKeys } from '../keys';

export async function keys() {
  const table = $<HTMLTableElement>('#keys-table');
  const render = async () => {
    const byId = await loadKeys();
    fillBody(
      table,
      [...byId.values()].map((k) => {
        const actions = el('td', { class: 'actions' });
        if (!k.revoked_at) {
          const label = keyLabel(byId, k.id);
          actions.append(
            actionButton({ text: 'Rename', label: `Rename ${label}` }, () => rename(k)),
            actionButton({ text: 'Revoke', label: `Revoke ${label}`, danger: true }, () => revoke(k)),
          );
        }
        return el(
          'tr',
          { 'data-key-id': k.id },
          cell(el('span', { class: 'key', title: k.id, text: k.name ?? '(unnamed)' })),
          cell(`${k.prefix}…`, 'mono'),
          cell(when(k.created_at)),
          cell(k.created_by ?? 'operator'),
          cell(when(k.last_used_at), 'last-used'),
          cell(k.revoked_at ? when(k.revoked_at) : 'no', 'revoked'),
          actions,
        );
      }),
      'No keys yet.',
    );
  };
  const revoke = (k: Key) =>
    ifConfirmed(
      {
        title: 'Revoke this key?',
        text: `${k.name ?? 'The key'} (${k.prefix}…) stops working at once, for every caller, and the watches it created are deleted (their refreshes are calls made with it). This cannot be undone.`,
        confirm: 'Revoke',
      },
      async () => {
        const revoked = await api<KeyRevoked>('POST', `/console/v1/keys/${encodeURIComponent(k.id)}/revoke`);
        const watches = revoked.deleted_watches.length;
        showStatus(`Revoked ${k.prefix}…${watches > 0 ? `, and deleted the ${watches === 1 ? 'watch' : `${watches} watches`} it created` : ''}.`);
        await render();
      },
    );
  const rename = (k: Key) => {
    const dialog = $<HTMLDialogElement>('#rename-dialog');
    const input = field($<HTMLFormElement>('#rename-form'), 'name');
    input.value = k.name ?? '';
    dialog.returnValue = '';
    dialog.onclose = guarded(async () => {
      if (dialog.returnValue !== 'confirm') return;
      const name = input.value.trim();
      await api('PATCH', `/console/v1/keys/${encodeURIComponent(k.id)}`, { name: name === '' ? null : name });
      showStatus('Renamed.');
      await render();
    });
    dialog.showModal();
  };
  const form = $<HTMLFormElement>('#create-key-form');
  form.addEventListener(
    'submit',
    guarded(async (event: Event) => {
      event.preventDefault();
      const name = field(form, 'name').value.trim();
      const test = (form.elements.namedItem('test') as HTMLInputElement | null)?.checked === true;
      const created = await api<KeyCreated>('POST', '/console/v1/keys', { ...(name === '' ? {} : { name }), ...(test ? { mode: 'test' } : {}) });
      form.reset();
      // The table first, so the key shows only once it is listed too.
      await render();
      $('#new-key-value').textContent = created.key;
      $('#new-key').hidden = false;
      $('#copy-key').textContent = 'Copy';
      $('#copy-key').focus();
    }),
  );
  $('#copy-key').addEventListener('click', (e) => copy($('#new-key-value').textContent ?? '', e.currentTarget as HTMLElement));
  $('#dismiss-key').addEventListener('click', () => {
    // The key leaves the page for good.
    $('#new-key-value').textContent = '';
    $('#new-key').hidden = true;
    field(form, 'name').focus();
  });
  await render();
}
