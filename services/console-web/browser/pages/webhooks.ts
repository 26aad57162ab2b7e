import { api, type Key, type Watch, type WatchRun, type WebhookDelivery, type WebhookEndpoint, type WebhookEndpointWithSecret } from '../api';
import { $, actionButton, cell, copy, el, field, fillBody, fmt, guarded, ifConfirmed, showStatus, when } from '../dom';
import { requestLink } from './request';

/** How many deliveries the page shows for an endpoint (the API's default). */
const DELIVERIES_SHOWN = 20;

/** An endpoint's state as words: a failing one says since when and why. */
function endpointState(e: WebhookEndpoint): string {
  if (e.state === 'disabled') return 'paused: deliveries wait until it is resumed';
  if (e.state !== 'failing') return e.state;
  const reason = e.failing_reason;
  const since = `failing since ${when(e.failing_since)} UTC`;
  if (!reason) return since;
  const got = reason.response_status !== null ? `HTTP ${reason.response_status}` : (reason.error ?? 'no answer');
  return `${since}: a delivery was given up after ${reason.attempts} attempt${reason.attempts === 1 ? '' : 's'}, the last one got ${got}`;
}

/** What a watch looks at: its operation and the reference it was given. */
const reference = (w: Watch) => `${w.operation}: ${Object.values(w.body).join(' ')}`;

/** Fills a select with options, keeping the chosen one while it is still offered. */
function setOptions(select: HTMLSelectElement, options: { value: string; text: string }[]) {
  const chosen = select.value;
  select.replaceChildren(...options.map((o) => el('option', { value: o.value, text: o.text })));
  if (options.some((o) => o.value === chosen)) select.value = chosen;
}

export async function webhooks() {
  const endpointsTable = $<HTMLTableElement>('#endpoints-table');
  const deliveriesTable = $<HTMLTableElement>('#deliveries-table');
  /** The endpoint whose deliveries are shown, if any. */
  let shown: WebhookEndpoint | undefined;

  const showSecret = (endpoint: WebhookEndpointWithSecret, what: string) => {
    $('#new-secret-for').textContent = what;
    $('#new-secret-value').textContent = endpoint.secret;
    $('#new-secret').hidden = false;
    $('#copy-secret').textContent = 'Copy';
    $('#copy-secret').focus();
  };

  // What the watch form offers (offerWatchChoices, below).
  let endpointChoices: WebhookEndpoint[] = [];
  let keyChoices: Key[] = [];
  const loadKeys = async () => {
    keyChoices = (await api<{ data: Key[] }>('GET', '/console/v1/keys')).data;
    offerWatchChoices();
  };

  const renderEndpoints = async () => {
    const { data } = await api<{ data: WebhookEndpoint[] }>('GET', '/console/v1/webhook-endpoints');
    endpointChoices = data;
    offerWatchChoices();
    fillBody(
      endpointsTable,
      data.map((e) =>
        el(
          'tr',
          { 'data-endpoint-id': e.id, 'data-state': e.state },
          cell(e.url, 'mono'),
          cell(e.event_types.join(', ')),
          cell(endpointState(e), e.state === 'failing' ? 'state failing' : 'state'),
          cell(when(e.created_at)),
          el(
            'td',
            { class: 'actions' },
            actionButton({ text: 'Deliveries', label: `Deliveries to ${e.url}` }, () => showDeliveries(e)),
            actionButton({ text: 'Edit', label: `Change ${e.url}` }, () => startEditing(e)),
            e.state === 'disabled'
              ? actionButton({ text: 'Resume', label: `Resume deliveries to ${e.url}` }, () => setEnabled(e, true))
              : actionButton({ text: 'Pause', label: `Pause deliveries to ${e.url}` }, () => setEnabled(e, false)),
            actionButton({ text: 'Rotate secret', label: `Rotate the secret of ${e.url}` }, () => rotate(e)),
            actionButton({ text: 'Delete', label: `Delete ${e.url}`, danger: true }, () => remove(e)),
          ),
        ),
      ),
      'No endpoints yet.',
    );
    return data;
  };

  /** The server checks the change as the public PATCH does (URL policy, known event types). */
  const patch = (e: WebhookEndpoint, change: { url?: string; event_types?: string[]; enabled?: boolean }) =>
    api<WebhookEndpoint>('PATCH', `/console/v1/webhook-endpoints/${encodeURIComponent(e.id)}`, change);

  const setEnabled = async (e: WebhookEndpoint, enabled: boolean) => {
    await patch(e, { enabled });
    showStatus(enabled ? `Resumed ${e.url}: the deliveries that waited go now.` : `Paused ${e.url}: nothing is sent to it, its deliveries wait until you resume it.`);
    await renderEndpoints();
  };

  const rotate = (e: WebhookEndpoint) =>
    ifConfirmed(
      {
        title: 'Rotate the signing secret?',
        text: `${e.url} gets a new secret, shown once. The current one keeps signing alongside it for a while, so the receiver can switch.`,
        confirm: 'Rotate',
      },
      async () => {
        const rotated = await api<WebhookEndpointWithSecret>('POST', `/console/v1/webhook-endpoints/${encodeURIComponent(e.id)}/rotate-secret`);
        await renderEndpoints();
        showSecret(rotated, `The new secret of ${rotated.url}; the previous one still signs until ${when(rotated.previous_secret_expires_at)} UTC.`);
      },
    );

  const remove = (e: WebhookEndpoint) =>
    ifConfirmed(
      {
        title: 'Delete this endpoint?',
        text: `${e.url} receives nothing more; its pending deliveries are dropped and the watches delivering to it are deleted. This cannot be undone.`,
        confirm: 'Delete',
      },
      async () => {
        await api('DELETE', `/console/v1/webhook-endpoints/${encodeURIComponent(e.id)}`);
        showStatus(`Deleted ${e.url} and the watches delivering to it.`);
        if (shown?.id === e.id) {
          shown = undefined;
          $('#deliveries').hidden = true;
        }
        await Promise.all([renderEndpoints(), renderWatches()]);
      },
    );

  const showDeliveries = async (e: WebhookEndpoint) => {
    shown = e;
    const { data } = await api<{ data: WebhookDelivery[] }>('GET', `/console/v1/webhook-endpoints/${encodeURIComponent(e.id)}/deliveries?limit=${DELIVERIES_SHOWN}`);
    $('#deliveries-title').textContent = `Recent deliveries to ${e.url}`;
    fillBody(
      deliveriesTable,
      data.map((d) =>
        el(
          'tr',
          { 'data-delivery-id': d.id, 'data-state': d.state },
          cell(d.id, 'mono'),
          cell(d.event_type),
          cell(d.state === 'pending' ? `pending (next attempt ${when(d.next_attempt_at)} UTC)` : d.state),
          cell(when(d.created_at)),
          cell(attemptList(d)),
          el(
            'td',
            { class: 'actions' },
            actionButton({ text: 'Re-send', label: `Re-send ${d.id}` }, () => resend(e, d)),
          ),
        ),
      ),
      'No deliveries yet.',
    );
    $('#deliveries').hidden = false;
  };

  const resend = async (e: WebhookEndpoint, d: WebhookDelivery) => {
    await api('POST', `/console/v1/webhook-endpoints/${encodeURIComponent(e.id)}/deliveries/${encodeURIComponent(d.id)}/resend`);
    showStatus(`${d.id} is due again, with the same webhook-id.`);
    await showDeliveries(e);
  };

  const renderWatches = async () => {
    const { data } = await api<{ data: Watch[] }>('GET', '/console/v1/watches');
    fillBody(
      $<HTMLTableElement>('#watches-table'),
      data.map((w) =>
        el(
          'tr',
          { 'data-watch-id': w.id, 'data-state': w.state },
          cell(reference(w)),
          cell(w.every),
          cell(w.paused_reason === 'insufficient_credits' ? 'paused: the balance cannot pay a refresh (resumes by itself once it can)' : w.state),
          cell(w.last_run_at === null ? 'not yet' : el('span', {}, `${when(w.last_run_at)} `, w.last_request_id ? requestLink(w.last_request_id) : '')),
          cell(when(w.next_run_at)),
          el(
            'td',
            { class: 'actions' },
            actionButton({ text: 'Run now', label: `Run ${reference(w)} now` }, () => runNow(w)),
            actionButton({ text: 'Delete', label: `Delete the watch of ${reference(w)}`, danger: true }, () => removeWatch(w)),
          ),
        ),
      ),
      'No watches yet.',
    );
  };

  // A watch needs an endpoint to send `profile.changed` to and a live key to refresh under: the
  // endpoints as the table last showed them, the keys as the page loaded (they change on the Keys page).
  const watchForm = $<HTMLFormElement>('#create-watch-form');
  const watchSelect = (name: string) => watchForm.elements.namedItem(name) as HTMLSelectElement;
  const offerWatchChoices = () => {
    const endpoints = endpointChoices;
    const live = keyChoices.filter((k) => k.mode === 'live' && k.revoked_at === null);
    setOptions(watchSelect('webhook_endpoint_id'), endpoints.map((e) => ({ value: e.id, text: e.url })));
    setOptions(watchSelect('key_id'), live.map((k) => ({ value: k.id, text: `${k.name ?? 'unnamed'} (${k.prefix}…)` })));
    const missing = [endpoints.length === 0 ? 'an endpoint (above)' : '', live.length === 0 ? 'a live key (Keys page)' : ''].filter(Boolean);
    $('#watch-form-hint').textContent = missing.length > 0 ? `A watch needs ${missing.join(' and ')} first.` : '';
    $('#watch-form-hint').hidden = missing.length === 0;
    $<HTMLButtonElement>('#create-watch-form button[type="submit"]').disabled = missing.length > 0;
  };
  watchForm.addEventListener(
    'submit',
    guarded(async (event: Event) => {
      event.preventDefault();
      // Each option names the body field its lookup takes the reference in (from the contract).
      const operation = watchSelect('operation').selectedOptions[0]!;
      const created = await api<Watch>('POST', '/console/v1/watches', {
        operation: operation.value,
        body: { [operation.dataset.referenceField!]: field(watchForm, 'reference').value.trim() },
        every: watchSelect('every').value,
        webhook_endpoint_id: watchSelect('webhook_endpoint_id').value,
        key_id: watchSelect('key_id').value,
      });
      field(watchForm, 'reference').value = '';
      await renderWatches();
      showStatus(`Watching ${reference(created)}, every ${created.every}; the first refresh is due ${when(created.next_run_at)} UTC.`);
    }),
  );

  const runNow = (w: Watch) =>
    ifConfirmed(
      {
        title: 'Refresh this watch now?',
        text: `${reference(w)} is looked up live now, charged like that lookup (refunded if it fails). Its next scheduled refresh moves to one interval from now.`,
        confirm: 'Run now',
      },
      async () => {
        try {
          const run = await api<WatchRun>('POST', `/console/v1/watches/${encodeURIComponent(w.id)}/run`);
          showStatus(`Refreshed ${reference(w)}: ${run.changed ? 'changed (a profile.changed webhook follows)' : 'unchanged'}; ${fmt(run.credits_charged)} credit${run.credits_charged === 1 ? '' : 's'} charged, ${fmt(run.credits_remaining)} left.`);
        } finally {
          // Out of credits pauses the watch: the table shows it either way.
          await renderWatches();
        }
      },
    );

  const removeWatch = (w: Watch) =>
    ifConfirmed({ title: 'Delete this watch?', text: `${reference(w)} is no longer refreshed or charged for.`, confirm: 'Delete' }, async () => {
      await api('DELETE', `/console/v1/watches/${encodeURIComponent(w.id)}`);
      showStatus(`Stopped watching ${reference(w)}.`);
      await renderWatches();
    });

  // One form adds an endpoint, or changes the one being edited (its URL and event types).
  const form = $<HTMLFormElement>('#create-endpoint-form');
  const eventTypeBoxes = () => [...form.querySelectorAll<HTMLInputElement>('input[name="event_types"]')];
  let editing: WebhookEndpoint | undefined;
  const setEditing = (e: WebhookEndpoint | undefined) => {
    editing = e;
    $('#create-endpoint-title').textContent = e ? `Change ${e.url}` : 'Add an endpoint';
    $<HTMLButtonElement>('#create-endpoint-form button[type="submit"]').textContent = e ? 'Save changes' : 'Add endpoint';
    $('#cancel-edit').hidden = !e;
    field(form, 'url').value = e?.url ?? '';
    // Not editing: the boxes as the page first had them.
    for (const box of eventTypeBoxes()) box.checked = e ? (e.event_types as readonly string[]).includes(box.value) : box.defaultChecked;
  };
  const startEditing = (e: WebhookEndpoint) => {
    setEditing(e);
    field(form, 'url').focus();
  };
  $('#cancel-edit').addEventListener('click', () => setEditing(undefined));
  form.addEventListener(
    'submit',
    guarded(async (event: Event) => {
      event.preventDefault();
      const change = { url: field(form, 'url').value.trim(), event_types: eventTypeBoxes().filter((box) => box.checked).map((box) => box.value) };
      if (editing) {
        const changed = await patch(editing, change);
        setEditing(undefined);
        showStatus(`Saved ${changed.url}.`);
        await renderEndpoints();
        return;
      }
      const created = await api<WebhookEndpointWithSecret>('POST', '/console/v1/webhook-endpoints', change);
      field(form, 'url').value = '';
      // The table first, so the secret shows only once the endpoint is listed too.
      await renderEndpoints();
      showSecret(created, `The secret of ${created.url}.`);
    }),
  );
  $('#copy-secret').addEventListener('click', (e) => copy($('#new-secret-value').textContent ?? '', e.currentTarget as HTMLElement));
  $('#dismiss-secret').addEventListener('click', () => {
    // The secret leaves the page for good.
    $('#new-secret-value').textContent = '';
    $('#new-secret').hidden = true;
    field(form, 'url').focus();
  });

  const [endpoints] = await Promise.all([renderEndpoints(), renderWatches(), loadKeys()]);
  // `?endpoint=` (the overview's banner links a failing one) opens its deliveries.
  const wanted = new URLSearchParams(location.search).get('endpoint');
  const opened = endpoints.find((e) => e.id === wanted);
  if (opened) await showDeliveries(opened);
}

/** A delivery's attempts, oldest first: status, response code, latency, time. */
function attemptList(d: WebhookDelivery): Node | string {
  if (d.attempts.length === 0) return 'none yet';
  return el(
    'ol',
    { class: 'attempts' },
    ...d.attempts.map((a) =>
      el('li', {
        text: `${a.status}${a.response_status !== null ? ` · HTTP ${a.response_status}` : ''} · ${fmt(a.latency_ms)} ms · ${when(a.started_at)}${a.error && a.response_status === null ? ` · ${a.error}` : ''}`,
        title: a.error ?? undefined,
      }),
    ),
  );
}
