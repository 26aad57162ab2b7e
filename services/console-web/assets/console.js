// The workspace console's one script: a client of the /console/v1 JSON API. No framework, no
// inline code (the pages' CSP allows only this file), charts drawn as SVG.
'use strict';

(() => {
  const page = document.body.dataset.page;
  const $ = (selector, root = document) => root.querySelector(selector);
  const state = { csrf: null, member: null };
  // The contract's operations come with the page (data-operations); each gets a colour by its position.
  const OPERATIONS = (document.body.dataset.operations || '').split(' ').filter(Boolean);
  const PALETTE = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#dc2626', '#0891b2', '#be185d'];
  const operationColor = (op) => (OPERATIONS.includes(op) ? PALETTE[OPERATIONS.indexOf(op) % PALETTE.length] : '#64748b');
  const numberFormat = new Intl.NumberFormat('en-US');
  const fmt = (n) => numberFormat.format(n);
  const when = (iso) => (iso ? iso.replace('T', ' ').slice(0, 19) : '—');

  class ApiFailure extends Error {
    constructor(status, body) {
      super((body && body.error && body.error.message) || `HTTP ${status}`);
      this.status = status;
      this.body = body;
      this.retryAfter = body && body.error ? body.error.retry_after_seconds : undefined;
    }
  }

  async function api(method, path, body) {
    const headers = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && state.csrf) headers['x-csrf-token'] = state.csrf;
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
    const text = await res.text();
    let parsed;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      if (res.status === 401 && state.member) {
        // The session ended (signed out elsewhere, removed, expired): back to sign-in.
        location.assign('/console');
      }
      throw new ApiFailure(res.status, parsed);
    }
    return parsed;
  }

  function showError(err) {
    const box = $('#error');
    if (!box) return;
    if (!err) {
      box.hidden = true;
      box.textContent = '';
      return;
    }
    let message = err instanceof ApiFailure ? err.message : 'Something went wrong. Try again.';
    const details = err instanceof ApiFailure && err.body && err.body.error && err.body.error.details;
    if (details && details.length) message += ` ${details.map((d) => d.message).join(' ')}`;
    box.textContent = message;
    box.hidden = false;
    box.focus && box.setAttribute('tabindex', '-1');
  }
  const showStatus = (text) => {
    const s = $('#status');
    if (s) s.textContent = text;
  };

  /** Runs a handler, showing its failure in the page's alert line. */
  const guarded = (fn) => async (...args) => {
    showError(null);
    try {
      await fn(...args);
    } catch (err) {
      showError(err);
    }
  };

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') node.textContent = v;
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children) node.append(c);
    return node;
  }
  const cell = (text, cls) => el('td', { text: text === null || text === undefined ? '—' : String(text), class: cls });
  const fillBody = (table, rows, empty) => {
    const body = $('tbody', table);
    body.replaceChildren(...rows);
    if (rows.length === 0) body.append(el('tr', {}, el('td', { colspan: String($('thead tr', table).children.length), text: empty, class: 'empty' })));
  };

  async function copy(text, button) {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      // No clipboard permission (plain http on another host): select it for Ctrl+C.
      const range = document.createRange();
      range.selectNodeContents(button.previousElementSibling);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = 'Press Ctrl+C';
    }
  }

  // ---------- chart: stacked bars per day, one colour per operation ----------

  function drawChart(container, legend, days, measure) {
    const width = 720;
    const height = 220;
    const pad = { left: 44, right: 8, top: 10, bottom: 28 };
    const totals = days.map((d) => d.operations.reduce((s, o) => s + Math.max(0, o[measure]), 0));
    const max = Math.max(1, ...totals);
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    svg.setAttribute('role', 'img');
    const total = totals.reduce((a, b) => a + b, 0);
    svg.setAttribute('aria-label', `${measure === 'calls' ? 'Calls' : 'Credits'} per day, ${days.length} days, ${fmt(total)} in all.`);
    const add = (tag, attrs, text) => {
      const node = document.createElementNS(ns, tag);
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
      if (text !== undefined) node.textContent = text;
      svg.append(node);
      return node;
    };
    const plotH = height - pad.top - pad.bottom;
    const slot = (width - pad.left - pad.right) / Math.max(1, days.length);
    add('line', { x1: pad.left, y1: pad.top + plotH, x2: width - pad.right, y2: pad.top + plotH, class: 'axis' });
    add('text', { x: pad.left - 6, y: pad.top + 10, 'text-anchor': 'end', class: 'tick' }, fmt(max));
    add('text', { x: pad.left - 6, y: pad.top + plotH, 'text-anchor': 'end', class: 'tick' }, '0');
    days.forEach((d, i) => {
      let y = pad.top + plotH;
      const x = pad.left + i * slot + slot * 0.15;
      for (const o of d.operations) {
        const value = Math.max(0, o[measure]);
        if (value === 0) continue;
        const h = (value / max) * plotH;
        y -= h;
        const rect = add('rect', { x, y, width: slot * 0.7, height: h, fill: operationColor(o.operation) });
        const title = document.createElementNS(ns, 'title');
        title.textContent = `${d.day} ${o.operation}: ${fmt(value)} ${measure}`;
        rect.append(title);
      }
      if (i % Math.ceil(days.length / 6) === 0 || i === days.length - 1) {
        add('text', { x: x + slot * 0.35, y: height - 8, 'text-anchor': 'middle', class: 'tick' }, d.day.slice(5));
      }
    });
    container.replaceChildren(svg);
    const operations = [...new Set(days.flatMap((d) => d.operations.map((o) => o.operation)))].sort();
    const swatch = (op) => {
      const box = document.createElementNS(ns, 'svg');
      box.setAttribute('class', 'swatch');
      box.setAttribute('viewBox', '0 0 12 12');
      box.setAttribute('aria-hidden', 'true');
      const rect = document.createElementNS(ns, 'rect');
      for (const [k, v] of Object.entries({ width: 12, height: 12, rx: 2, fill: operationColor(op) })) rect.setAttribute(k, String(v));
      box.append(rect);
      return box;
    };
    legend.replaceChildren(...operations.map((op) => el('li', {}, swatch(op), document.createTextNode(op))));
  }

  // ---------- pages ----------

  async function loadSession() {
    try {
      const session = await api('GET', '/console/v1/session');
      state.csrf = session.csrf_token;
      state.member = session.member;
      rememberWorkspace(session.workspace.id);
      $('#workspace-name').textContent = session.workspace.name;
      $('#member-email').textContent = `${session.member.email} (${session.member.role})`;
      if (session.member.role !== 'owner') for (const a of document.querySelectorAll('[data-owner-only]')) a.parentElement.remove();
      return session;
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 401) location.assign('/console');
      throw err;
    }
  }

  // A member signs in to one workspace: the page offers the last one used in this browser.
  const WORKSPACE_KEY = 'console.workspace';
  function rememberWorkspace(id) {
    try {
      localStorage.setItem(WORKSPACE_KEY, id);
    } catch {
      // Storage refused (private mode): the member types the id.
    }
  }
  function rememberedWorkspace() {
    try {
      return localStorage.getItem(WORKSPACE_KEY) || '';
    } catch {
      return '';
    }
  }

  const pages = {
    async signin() {
      const form = $('#sign-in-form');
      form.elements.workspace.value = new URLSearchParams(location.search).get('workspace') || rememberedWorkspace();
      form.addEventListener('submit', guarded(async (event) => {
        event.preventDefault();
        const data = new FormData(form);
        try {
          await api('POST', '/console/v1/session', { workspace_id: String(data.get('workspace')).trim(), email: data.get('email'), password: data.get('password') });
        } catch (err) {
          if (err instanceof ApiFailure && err.status === 429) {
            throw new ApiFailure(429, { error: { message: `${err.message} Try again in ${err.retryAfter} s.` } });
          }
          throw err;
        }
        location.assign('/console/overview');
      }));
    },

    async forgot() {
      const form = $('#forgot-form');
      form.elements.workspace.value = rememberedWorkspace();
      form.addEventListener('submit', guarded(async (event) => {
        event.preventDefault();
        await api('POST', '/console/v1/password-reset', { workspace_id: form.elements.workspace.value.trim(), email: form.elements.email.value });
        form.hidden = true;
        $('#forgot-sent').hidden = false;
      }));
    },

    async reset() {
      const params = new URLSearchParams(location.search);
      const token = params.get('token') || '';
      // Out of the address bar and history: the link is a one-time secret.
      history.replaceState(null, '', `/console/reset?workspace=${encodeURIComponent(params.get('workspace') || '')}`);
      const form = $('#reset-form');
      form.addEventListener('submit', guarded(async (event) => {
        event.preventDefault();
        if (form.elements.password.value !== form.elements.repeat.value) throw new ApiFailure(400, { error: { message: 'The two passwords differ.' } });
        await api('POST', '/console/v1/password-reset/complete', { token, new_password: form.elements.password.value });
        form.hidden = true;
        $('#reset-done').hidden = false;
      }));
    },

    async accept() {
      const token = new URLSearchParams(location.search).get('token') || '';
      // Out of the address bar and history: the link is a one-time secret.
      history.replaceState(null, '', '/console/accept');
      const form = $('#accept-form');
      try {
        const preview = await api('GET', `/console/v1/invitations/preview?token=${encodeURIComponent(token)}`);
        $('#invitation-summary').textContent = `You are invited to ${preview.workspace_name} as ${preview.role}. You will sign in with its id, ${preview.workspace_id}, your email and this password.`;
        form.elements.workspace.value = preview.workspace_id;
        form.elements.email.value = preview.email;
        form.hidden = false;
      } catch (err) {
        showError(err);
        return;
      }
      form.addEventListener('submit', guarded(async (event) => {
        event.preventDefault();
        if (form.elements.password.value !== form.elements.repeat.value) throw new ApiFailure(400, { error: { message: 'The two passwords differ.' } });
        await api('POST', '/console/v1/invitations/accept', { token, password: form.elements.password.value });
        location.assign('/console/overview');
      }));
    },

    async overview() {
      const data = await api('GET', '/console/v1/overview');
      $('#balance').textContent = fmt(data.balance);
      $('#spent-today').textContent = fmt(data.spent_today);
      $('#spent-month').textContent = fmt(data.spent_this_month);
      const draw = (measure) => drawChart($('#chart'), $('#legend'), data.days, measure);
      draw('credits');
      for (const button of document.querySelectorAll('[data-measure]')) {
        button.addEventListener('click', () => {
          for (const b of document.querySelectorAll('[data-measure]')) b.setAttribute('aria-pressed', String(b === button));
          draw(button.dataset.measure);
        });
      }
      fillBody(
        $('#errors-table'),
        data.recent_errors.map((e) => el('tr', {}, cell(when(e.recorded_at)), cell(e.request_id, 'mono'), cell(e.key_id, 'mono'), cell(e.operation), cell(e.error_code))),
        'No errors.',
      );
      const refused = data.last_insufficient_credits;
      if (refused) {
        $('#refused-banner').textContent = `A call was refused for lack of credits (402) at ${when(refused.refused_at)} UTC: ${refused.path}, request ${refused.request_id}. Balance now: ${fmt(data.balance)}.`;
        $('#refused-banner').hidden = false;
      }
      const alertForm = $('#alert-form');
      if (alertForm) {
        alertForm.elements.threshold.value = data.low_balance_threshold ?? '';
        alertForm.addEventListener('submit', guarded(async (event) => {
          event.preventDefault();
          const value = alertForm.elements.threshold.value.trim();
          await api('PATCH', '/console/v1/alerts', { low_balance_threshold: value === '' ? null : Number(value) });
          $('#status').textContent = value === '' ? 'Low-balance alert removed.' : `Owners are emailed when the balance falls below ${fmt(Number(value))}.`;
        }));
      }
    },

    async keys() {
      const table = $('#keys-table');
      const render = async () => {
        const { data } = await api('GET', '/console/v1/keys');
        fillBody(
          table,
          data.map((k) => {
            const actions = el('td', { class: 'actions' });
            if (!k.revoked_at) {
              actions.append(
                el('button', { type: 'button', class: 'secondary', text: 'Rename', 'aria-label': `Rename ${k.name || k.prefix}`, onclick: () => rename(k) }),
                ' ',
                el('button', { type: 'button', class: 'danger', text: 'Revoke', 'aria-label': `Revoke ${k.name || k.prefix}`, onclick: () => revoke(k) }),
              );
            }
            return el('tr', { 'data-key-id': k.id }, cell(k.name), cell(`${k.prefix}…`, 'mono'), cell(when(k.created_at)), cell(k.created_by || 'operator'), cell(when(k.last_used_at), 'last-used'), cell(k.revoked_at ? when(k.revoked_at) : 'no', 'revoked'), actions);
          }),
          'No keys yet.',
        );
      };
      const revoke = (k) => {
        const dialog = $('#revoke-dialog');
        $('#revoke-text').textContent = `${k.name || 'The key'} (${k.prefix}…) stops working at once, for every caller. This cannot be undone.`;
        dialog.returnValue = '';
        dialog.onclose = guarded(async () => {
          if (dialog.returnValue !== 'confirm') return;
          await api('POST', `/console/v1/keys/${encodeURIComponent(k.id)}/revoke`);
          showStatus(`Revoked ${k.prefix}…`);
          await render();
        });
        dialog.showModal();
      };
      const rename = (k) => {
        const dialog = $('#rename-dialog');
        const input = $('#rename-form').elements.name;
        input.value = k.name || '';
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
      const form = $('#create-key-form');
      form.addEventListener('submit', guarded(async (event) => {
        event.preventDefault();
        const name = form.elements.name.value.trim();
        const created = await api('POST', '/console/v1/keys', name === '' ? {} : { name });
        form.reset();
        // The table first, so the key shows only once it is listed too.
        await render();
        $('#new-key-value').textContent = created.key;
        $('#new-key').hidden = false;
        $('#copy-key').textContent = 'Copy';
        $('#copy-key').focus();
      }));
      $('#copy-key').addEventListener('click', (e) => copy($('#new-key-value').textContent, e.currentTarget));
      $('#dismiss-key').addEventListener('click', () => {
        // The key leaves the page for good.
        $('#new-key-value').textContent = '';
        $('#new-key').hidden = true;
        form.elements.name.focus();
      });
      await render();
    },

    async usage() {
      const form = $('#usage-filters');
      const params = new URLSearchParams(location.search);
      const { data: keys } = await api('GET', '/console/v1/keys');
      const select = form.elements.key_id;
      for (const k of keys) select.append(el('option', { value: k.id, text: `${k.name || 'unnamed'} (${k.prefix}…)` }));
      for (const name of ['key_id', 'operation', 'from', 'to']) if (params.get(name)) form.elements[name].value = params.get(name);
      const keyLabel = new Map(keys.map((k) => [k.id, k.name || `${k.prefix}…`]));
      const query = new URLSearchParams();
      for (const name of ['key_id', 'operation', 'from', 'to']) if (form.elements[name].value) query.set(name, form.elements[name].value);
      const { data } = await api('GET', `/console/v1/usage?${query}`);
      fillBody(
        $('#usage-table'),
        data.map((r) => el('tr', {}, cell(r.day), cell(keyLabel.get(r.key_id) || r.key_id), cell(r.operation), cell(fmt(r.calls), 'num'), cell(fmt(r.credits_charged), 'num'), cell(fmt(r.credits_refunded), 'num'), cell(fmt(r.errors), 'num'))),
        'No usage for these filters.',
      );
      const sum = (f) => data.reduce((s, r) => s + Number(r[f]), 0);
      $('#usage-table tfoot').replaceChildren(
        el('tr', {}, el('th', { scope: 'row', colspan: '3', text: 'Total' }), cell(fmt(sum('calls')), 'num total-calls'), cell(fmt(sum('credits_charged')), 'num total-charged'), cell(fmt(sum('credits_refunded')), 'num total-refunded'), cell(fmt(sum('errors')), 'num total-errors')),
      );
      const byDay = new Map();
      for (const r of data) {
        const ops = byDay.get(r.day) || new Map();
        ops.set(r.operation, (ops.get(r.operation) || 0) + Number(r.credits_charged) - Number(r.credits_refunded));
        byDay.set(r.day, ops);
      }
      const days = [...byDay].sort(([a], [b]) => a.localeCompare(b)).map(([day, ops]) => ({ day, operations: [...ops].map(([operation, credits]) => ({ operation, credits })) }));
      drawChart($('#chart'), $('#legend'), days, 'credits');
    },

    async ledger() {
      const table = $('#ledger-table');
      const search = $('#ledger-search');
      let after = 0;
      let next = null;
      const render = async () => {
        const query = new URLSearchParams({ limit: '50' });
        if (after) query.set('after', String(after));
        const requestId = search.elements.request_id.value.trim();
        if (requestId) query.set('request_id', requestId);
        const pageData = await api('GET', `/console/v1/ledger?${query}`);
        next = pageData.next;
        $('#ledger-next').disabled = next === null;
        fillBody(
          table,
          pageData.data.map((e) => el('tr', {}, cell(e.position, 'num'), cell(when(e.recorded_at)), cell(e.type), cell(e.request_id, 'mono'), cell(e.key_id, 'mono'), cell(e.credits > 0 ? `+${fmt(e.credits)}` : fmt(e.credits), 'num'), cell(fmt(e.balance_after), 'num'))),
          'No entries.',
        );
      };
      search.addEventListener('submit', guarded(async (event) => {
        event.preventDefault();
        after = 0;
        await render();
      }));
      $('#ledger-next').addEventListener('click', guarded(async () => {
        if (next === null) return;
        after = next;
        await render();
      }));
      $('#ledger-first').addEventListener('click', guarded(async () => {
        after = 0;
        await render();
      }));
      const csv = $('#ledger-csv');
      const today = new Date().toISOString().slice(0, 10);
      csv.elements.from.value = `${today.slice(0, 7)}-01`;
      csv.elements.to.value = today;
      csv.addEventListener('submit', (event) => {
        event.preventDefault();
        const query = new URLSearchParams({ from: csv.elements.from.value, to: csv.elements.to.value });
        location.assign(`/console/v1/ledger.csv?${query}`);
      });
      await render();
    },

    async statement() {
      const form = $('#statement-period');
      const dayOf = (date) => date.toISOString().slice(0, 10);
      // A calendar month of UTC days, half-open: its first day to the next month's first day.
      const monthPeriod = (month) => {
        const [year, index] = month.split('-').map(Number);
        return { from: dayOf(new Date(Date.UTC(year, index - 1, 1))), to: dayOf(new Date(Date.UTC(year, index, 1))) };
      };
      const stepMonth = (month, by) => {
        const [year, index] = month.split('-').map(Number);
        return dayOf(new Date(Date.UTC(year, index - 1 + by, 1))).slice(0, 7);
      };
      const showPeriod = (period) => {
        form.elements.from.value = period.from;
        form.elements.to.value = period.to;
        const month = monthPeriod(period.from.slice(0, 7));
        form.elements.month.value = month.from === period.from && month.to === period.to ? period.from.slice(0, 7) : '';
      };
      let shown = null;
      const term = (label, value, id) => el('span', { class: 'term' }, el('span', { class: 'label', text: label }), ' ', el('strong', { id, text: fmt(value) }));
      const render = async (period) => {
        const query = new URLSearchParams({ from: `${period.from}T00:00:00Z`, to: `${period.to}T00:00:00Z` });
        const s = await api('GET', `/console/v1/statement?${query}`);
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
          term('opening', s.opening_balance, 'identity-opening'), ' + ',
          term('granted', s.credits_granted, 'identity-granted'), ' − ',
          term('charged', s.charged, 'identity-charged'), ' + ',
          term('refunded', s.refunded, 'identity-refunded'), ' = ',
          term('closing', s.closing_balance, 'identity-closing'),
        );
        fillBody(
          $('#statement-table'),
          s.by_operation.map((o) => el('tr', {}, cell(o.operation), cell(fmt(o.calls), 'num'), cell(fmt(o.charged), 'num'), cell(fmt(o.refunded), 'num'))),
          'No calls charged in this period.',
        );
        $('#statement-table tfoot').replaceChildren(
          el('tr', {}, el('th', { scope: 'row', text: 'Total' }), cell(fmt(s.calls), 'num'), cell(fmt(s.charged), 'num'), cell(fmt(s.refunded), 'num')),
        );
        $('#entries').textContent = s.entries === 0
          ? 'No ledger entries in this period.'
          : `${fmt(s.entries)} ledger ${s.entries === 1 ? 'entry' : 'entries'}, log positions ${s.first_position} to ${s.last_position}.`;
        query.set('format', 'csv');
        $('#statement-csv').href = `/console/v1/statement?${query}`;
        history.replaceState(null, '', `/console/statement?${new URLSearchParams(period)}`);
        $('#statement').dataset.period = `${period.from}/${period.to}`;
        shown = period;
      };
      form.elements.month.addEventListener('change', () => {
        if (/^\d{4}-\d\d$/.test(form.elements.month.value)) showPeriod(monthPeriod(form.elements.month.value));
      });
      form.addEventListener('submit', guarded(async (event) => {
        event.preventDefault();
        await render({ from: form.elements.from.value, to: form.elements.to.value });
      }));
      for (const [id, by] of [['#previous-month', -1], ['#next-month', 1]]) {
        $(id).addEventListener('click', guarded(async () => render(monthPeriod(stepMonth((shown ? shown.from : dayOf(new Date())).slice(0, 7), by)))));
      }
      const params = new URLSearchParams(location.search);
      const asked = params.get('from') && params.get('to') ? { from: params.get('from'), to: params.get('to') } : null;
      await render(asked || monthPeriod(dayOf(new Date()).slice(0, 7)));
    },

    async members() {
      const render = async () => {
        const data = await api('GET', '/console/v1/members');
        fillBody(
          $('#members-table'),
          data.members.map((m) => {
            const role = el('select', { 'aria-label': `Role of ${m.email}` }, el('option', { value: 'member', text: 'member' }), el('option', { value: 'owner', text: 'owner' }));
            role.value = m.role;
            const actions = el(
              'td',
              { class: 'actions' },
              el('button', { type: 'button', class: 'secondary', text: 'Change role', onclick: guarded(async () => {
                await api('PATCH', `/console/v1/members/${encodeURIComponent(m.id)}`, { role: role.value });
                showStatus(`${m.email} is now ${role.value}.`);
                await render();
              }) }),
              ' ',
              el('button', { type: 'button', class: 'danger', text: 'Remove', onclick: guarded(async () => {
                if (!confirm(`Remove ${m.email} from the workspace? Their sessions end at once.`)) return;
                await api('DELETE', `/console/v1/members/${encodeURIComponent(m.id)}`);
                showStatus(`Removed ${m.email}.`);
                await render();
              }) }),
            );
            return el('tr', {}, cell(m.email), el('td', {}, role), cell(when(m.joined_at)), actions);
          }),
          'No members.',
        );
        fillBody(
          $('#invitations-table'),
          data.invitations.map((i) => el('tr', {}, cell(i.email), cell(i.role), cell(when(i.expires_at)), el('td', {}, el('button', { type: 'button', class: 'secondary', text: 'Cancel', onclick: guarded(async () => {
            await api('DELETE', `/console/v1/invitations/${encodeURIComponent(i.id)}`);
            await render();
          }) })))),
          'No pending invitations.',
        );
      };
      const form = $('#invite-form');
      form.addEventListener('submit', guarded(async (event) => {
        event.preventDefault();
        const invitation = await api('POST', '/console/v1/invitations', { email: form.elements.email.value, role: form.elements.role.value });
        form.reset();
        // The table first, so the note shows only once the invitation is listed too.
        await render();
        $('#invite-sent-to').textContent = invitation.email;
        $('#invite-sent').hidden = false;
      }));
      await render();
    },

    async account() {
      const form = $('#password-form');
      form.addEventListener('submit', guarded(async (event) => {
        event.preventDefault();
        const session = await api('POST', '/console/v1/password', { current_password: form.elements.current_password.value, new_password: form.elements.new_password.value });
        state.csrf = session.csrf_token;
        form.reset();
        showStatus('Password changed. Your other sessions have ended.');
      }));
    },
  };

  async function start() {
    if (!['signin', 'accept', 'forgot', 'reset'].includes(page)) {
      await loadSession();
      $('#sign-out').addEventListener('click', guarded(async () => {
        await api('DELETE', '/console/v1/session');
        state.member = null;
        location.assign('/console');
      }));
    }
    await pages[page]();
    document.body.dataset.ready = 'true';
  }

  start().catch((err) => {
    showError(err);
    document.body.dataset.ready = 'error';
  });
})();
