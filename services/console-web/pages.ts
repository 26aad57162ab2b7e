import { CSRF_HEADER } from '../../contracts/console';
import { inlineCodeHtml } from '../../contracts/errors';
import { Operation } from '../../contracts/events';
import { ERRORS_MEANING } from '../../contracts/http';
import { WATCH_INTERVALS, WATCHED_OPERATIONS, WEBHOOK_EVENT_TYPE_NAMES, WEBHOOK_EVENT_TYPES, WEBHOOK_URL_MAX_CHARS } from '../../contracts/webhooks';
import { PASSWORD_MIN_CHARS } from '../members/rules';

/**
 * The console's HTML: one shell per page, the page's static parts (forms, tables, filters) in the
 * markup, filled by the one script (browser/main.ts, bundled) from the /console/v1 API. No inline
 * script or style, so the pages run under a CSP that allows only this origin's files. What the
 * script needs of the contract comes with the page, on the body's data attributes.
 */

/** The operations of the contract, in its order: the usage filter lists them and the script colours them by position. */
const OPERATIONS = Operation.options;

export const CONSOLE_PAGES = ['signin', 'accept', 'forgot', 'reset', 'overview', 'keys', 'usage', 'ledger', 'request', 'statement', 'members', 'webhooks', 'account'] as const;
export type ConsolePage = (typeof CONSOLE_PAGES)[number];

const TITLES: Record<ConsolePage, string> = {
  signin: 'Sign in',
  accept: 'Join a workspace',
  forgot: 'Forgot your password',
  reset: 'Choose a new password',
  overview: 'Overview',
  keys: 'API keys',
  usage: 'Usage',
  ledger: 'Ledger',
  request: 'Request',
  statement: 'Statement',
  members: 'Members',
  webhooks: 'Webhooks',
  account: 'Account',
};

/** Pages shown without a session. */
export const OPEN_PAGES: readonly ConsolePage[] = ['signin', 'accept', 'forgot', 'reset'];

const NAV: ConsolePage[] = ['overview', 'keys', 'webhooks', 'usage', 'ledger', 'statement', 'members', 'account'];

export function renderPage(page: ConsolePage, assets: { js: string; css: string; icon: string }): string {
  const signedIn = !OPEN_PAGES.includes(page);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${TITLES[page]} · Lookup console</title>
<link rel="icon" type="image/svg+xml" href="${assets.icon}">
<link rel="stylesheet" href="${assets.css}">
<script src="${assets.js}" defer></script>
</head>
<body data-page="${page}" data-operations="${OPERATIONS.join(' ')}" data-csrf-header="${CSRF_HEADER.toLowerCase()}">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/console/overview">Lookup console</a>
  ${signedIn ? `<span class="workspace" id="workspace-name"></span>
  <nav aria-label="Console">
    <ul>${NAV.map((p) => `<li><a href="/console/${p}"${p === page ? ' aria-current="page"' : ''}${p === 'members' ? ' data-owner-only' : ''}>${TITLES[p]}</a></li>`).join('')}</ul>
  </nav>
  <span class="who" id="member-email"></span>
  <button type="button" id="sign-out" class="secondary">Sign out</button>` : ''}
</header>
<main id="main" tabindex="-1">
<h1>${TITLES[page]}</h1>
<p id="status" role="status" aria-live="polite"></p>
<p id="error" role="alert" class="error" hidden></p>
${BODIES[page]}
</main>
${signedIn ? CONFIRM_DIALOG : ''}
</body>
</html>
`;
}

/** Every period of the console is half-open, [from, to), in UTC days: the labels say so. */
const dayInputs = `<label>From (UTC day, included) <input type="date" name="from" required></label>
  <label>To (UTC day, excluded) <input type="date" name="to" required></label>`;

/** The period picker: the last 7, 30 or 90 UTC days at a click, or any [from, to). */
const rangePicker = `<div class="presets" role="group" aria-label="Last days">
    ${[7, 30, 90].map((n) => `<button type="button" class="secondary" data-days="${n}" aria-pressed="false">${n} days</button>`).join('\n    ')}
  </div>
  ${dayInputs}`;

/** A scroll box a keyboard can reach (and scroll): focusable, named. */
const scrollBox = (label: string, table: string) => `<div class="table-wrap" tabindex="0" role="region" aria-label="${label}">${table}</div>`;

/** The usage chart: measure and split switches, the chart, its legend (one button per series). */
const usageChart = (title: string, hint: string) => `<section class="card" aria-labelledby="chart-title">
  <h2 id="chart-title">${title}</h2>
  <p class="hint"><span id="chart-range"></span>. ${hint}</p>
  <div class="chart-switches">
    <div class="chart-switch" role="group" aria-label="Measure">
      <button type="button" data-measure="credits" aria-pressed="true">Credits</button>
      <button type="button" data-measure="calls" aria-pressed="false">Calls</button>
    </div>
    <div class="chart-switch" role="group" aria-label="Split by">
      <button type="button" data-split="operation" aria-pressed="true">Per operation</button>
      <button type="button" data-split="key" aria-pressed="false">Per key</button>
    </div>
  </div>
  <div id="chart" class="chart"></div>
  <ul id="legend" class="legend" aria-label="Series"></ul>
</section>`;

/** The one confirmation of every page (revoking a key, removing a member, cancelling an invitation). */
const CONFIRM_DIALOG = `<dialog id="confirm-dialog" aria-labelledby="confirm-title" aria-describedby="confirm-text">
  <form method="dialog">
    <h2 id="confirm-title"></h2>
    <p id="confirm-text"></p>
    <div class="actions"><button value="cancel" class="secondary">Cancel</button> <button value="confirm" class="danger" id="confirm-button"></button></div>
  </form>
</dialog>`;

/** Searching a request id opens its story. */
const requestSearch = `<form id="request-search" class="card inline" role="search" action="/console/request">
  <label>Request id <input type="search" name="id" placeholder="req_…" spellcheck="false" required></label>
  <button type="submit">Search</button>
</form>`;

const errorsDefinition = `<p class="hint definition"><dfn>Errors</dfn>: ${ERRORS_MEANING}</p>`;

const BODIES: Record<ConsolePage, string> = {
  signin: `<form id="sign-in-form" class="card narrow">
  <label>Workspace id <input type="text" name="workspace" autocomplete="organization" placeholder="ws_…" spellcheck="false" required></label>
  <label>Email <input type="email" name="email" autocomplete="username" required></label>
  <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
  <button type="submit">Sign in</button>
</form>
<p class="hint">New here? Follow the invitation link you were emailed. The workspace id is in that link; this browser remembers the last one.</p>
<p class="hint"><a href="/console/forgot" id="forgot-link">Forgot your password?</a></p>`,

  forgot: `<form id="forgot-form" class="card narrow">
  <label>Workspace id <input type="text" name="workspace" autocomplete="organization" placeholder="ws_…" spellcheck="false" required></label>
  <label>Email <input type="email" name="email" autocomplete="username" required></label>
  <button type="submit">Email me a reset link</button>
</form>
<p id="forgot-sent" class="hint" hidden>If this email is a member of the workspace, a reset link is on its way (valid 1 hour, works once).</p>`,

  reset: `<form id="reset-form" class="card narrow">
  <label>New password (at least ${PASSWORD_MIN_CHARS} characters)
    <input type="password" name="password" autocomplete="new-password" minlength="${PASSWORD_MIN_CHARS}" required></label>
  <label>Repeat it <input type="password" name="repeat" autocomplete="new-password" minlength="${PASSWORD_MIN_CHARS}" required></label>
  <button type="submit">Set password</button>
</form>
<p id="reset-done" class="hint" hidden>Your password is changed and every session ended. <a href="/console">Sign in</a>.</p>`,

  accept: `<p id="invitation-summary"></p>
<form id="accept-form" class="card narrow" hidden>
  <label>Workspace id <input type="text" name="workspace" autocomplete="organization" readonly></label>
  <label>Email <input type="email" name="email" autocomplete="username" readonly></label>
  <label>Choose a password (at least ${PASSWORD_MIN_CHARS} characters)
    <input type="password" name="password" autocomplete="new-password" minlength="${PASSWORD_MIN_CHARS}" required></label>
  <label>Repeat it <input type="password" name="repeat" autocomplete="new-password" minlength="${PASSWORD_MIN_CHARS}" required></label>
  <button type="submit">Set password and sign in</button>
</form>`,

  overview: `<p id="refused-banner" class="warning" hidden></p>
<p id="hooks-banner" class="warning" hidden></p>
<section class="tiles" aria-label="Credits">
  <div class="tile"><span class="label">Balance</span><span class="value" id="balance">–</span></div>
  <div class="tile"><span class="label">Spent today</span><span class="value" id="spent-today">–</span></div>
  <div class="tile"><span class="label">Spent this month</span><span class="value" id="spent-month">–</span></div>
</section>
<form id="chart-period" class="card inline period" action="/console/overview">
  ${rangePicker}
  <button type="submit">Show</button>
</form>
${usageChart('Spending', 'Click a series to see its usage.')}
<section class="card" aria-labelledby="errors-title">
  <h2 id="errors-title">Last 10 errors</h2>
  ${errorsDefinition}
  ${scrollBox('Last 10 errors', '<table id="errors-table"><thead><tr><th scope="col">When (UTC)</th><th scope="col">Request</th><th scope="col">Key</th><th scope="col">Operation</th><th scope="col">Error</th></tr></thead><tbody></tbody></table>')}
</section>
<section class="card" aria-labelledby="alert-title"><div data-owner-only>
  <h2 id="alert-title">Low-balance alert</h2>
  <form id="alert-form" class="inline">
    <label>Email the owners when the balance falls below <input type="number" name="threshold" min="0" step="1" placeholder="no alert"></label>
    <button type="submit">Save</button>
  </form>
</div></section>`,

  keys: `<section class="card">
  <h2>Create a key</h2>
  <form id="create-key-form" class="inline">
    <label>Name <input type="text" name="name" maxlength="200" placeholder="e.g. production"></label>
    <label><input type="checkbox" name="test"> Test key (<code>lk_test_</code>: sandbox answers, never charged)</label>
    <button type="submit">Create key</button>
  </form>
  <div id="new-key" class="new-key" hidden>
    <p class="warning"><strong>Copy this key now.</strong> It is shown only this once; we keep only a hash of it.</p>
    <div class="secret"><code id="new-key-value"></code> <button type="button" id="copy-key">Copy</button></div>
    <button type="button" id="dismiss-key" class="secondary">I have stored it</button>
  </div>
</section>
<section class="card">
  <h2>Keys</h2>
  ${scrollBox('Keys', '<table id="keys-table"><thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Created (UTC)</th><th scope="col">Created by</th><th scope="col">Last used (UTC)</th><th scope="col">Revoked (UTC)</th><th scope="col">Actions</th></tr></thead><tbody></tbody></table>')}
</section>
<dialog id="rename-dialog" aria-labelledby="rename-title">
  <form method="dialog" id="rename-form">
    <h2 id="rename-title">Rename key</h2>
    <label>Name <input type="text" name="name" maxlength="200"></label>
    <div class="actions"><button value="cancel" class="secondary" formnovalidate>Cancel</button> <button value="confirm">Save</button></div>
  </form>
</dialog>`,

  usage: `<form id="usage-filters" class="card inline period" action="/console/usage">
  <label>Key <select name="key_id"><option value="">All keys</option></select></label>
  <label>Operation <select name="operation"><option value="">All operations</option>
    ${OPERATIONS.map((op) => `<option>${op}</option>`).join('')}</select></label>
  ${rangePicker}
  <button type="submit">Apply</button>
</form>
${usageChart('Usage per day', 'Click a series to show only its rows; click it again to show all.')}
<section class="card" aria-labelledby="usage-title">
  <h2 id="usage-title">Per day, key and operation</h2>
  ${errorsDefinition}
  ${scrollBox('Usage per day, key and operation', '<table id="usage-table"><thead><tr><th scope="col">Day (UTC)</th><th scope="col">Key</th><th scope="col">Operation</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Charged</th><th scope="col" class="num">Refunded</th><th scope="col" class="num">Errors</th></tr></thead><tbody></tbody><tfoot></tfoot></table>')}
</section>`,

  ledger: `${requestSearch}
<section class="card">
  ${scrollBox('Ledger entries', '<table id="ledger-table"><thead><tr><th scope="col" class="num">Position</th><th scope="col">When (UTC)</th><th scope="col">Type</th><th scope="col">Operation</th><th scope="col">Request</th><th scope="col">Key</th><th scope="col" class="num">Credits</th><th scope="col" class="num">Balance after</th></tr></thead><tbody></tbody></table>')}
  <div class="actions"><button type="button" id="ledger-first" class="secondary">First page</button> <button type="button" id="ledger-next">Next page</button></div>
</section>
<form id="ledger-csv" class="card inline">
  <h2>Download CSV</h2>
  ${dayInputs}
  <button type="submit">Download</button>
</form>`,

  request: `${requestSearch}
<section id="story" class="card" aria-labelledby="story-title" hidden>
  <h2 id="story-title">The call</h2>
  <dl class="facts">
    <div><dt>Request id</dt><dd id="story-request" class="mono"></dd></div>
    <div><dt>Operation</dt><dd id="story-operation"></dd></div>
    <div><dt>Key</dt><dd id="story-key"></dd></div>
    <div><dt>Ended (UTC)</dt><dd id="story-time"></dd></div>
    <div><dt>Status</dt><dd id="story-status"></dd></div>
    <div><dt>Cache</dt><dd id="story-cache"></dd></div>
    <div><dt>Charged</dt><dd id="story-charged"></dd></div>
    <div><dt>Refunded</dt><dd id="story-refund"></dd></div>
    <div><dt>Profile content hash</dt><dd id="story-hash" class="mono"></dd></div>
  </dl>
  ${errorsDefinition}
</section>
<section class="card" aria-labelledby="story-ledger-title" data-story hidden>
  <h2 id="story-ledger-title">Its ledger entries</h2>
  ${scrollBox('Its ledger entries', '<table id="story-ledger"><thead><tr><th scope="col" class="num">Position</th><th scope="col">When (UTC)</th><th scope="col">Type</th><th scope="col" class="num">Credits</th><th scope="col" class="num">Balance after</th></tr></thead><tbody></tbody></table>')}
</section>
<section class="card" aria-labelledby="story-events-title" data-story hidden>
  <h2 id="story-events-title">The events it appended to the log</h2>
  ${scrollBox('The events it appended', '<table id="story-events"><thead><tr><th scope="col" class="num">Position</th><th scope="col">When (UTC)</th><th scope="col">Type</th><th scope="col">Stream</th></tr></thead><tbody></tbody></table>')}
</section>`,

  statement: `<form id="statement-period" class="card inline">
  <label>Month <input type="month" name="month"></label>
  ${dayInputs}
  <button type="submit">Show</button>
  <div class="period-steps"><button type="button" id="previous-month" class="secondary">Previous month</button> <button type="button" id="next-month" class="secondary">Next month</button></div>
</form>
<section id="statement" aria-labelledby="statement-title">
  <h2 id="statement-title" class="period" aria-live="polite">–</h2>
  <div class="tiles compact">
    <div class="tile"><span class="label">Opening balance</span><span class="value" id="opening">–</span></div>
    <div class="tile"><span class="label">Credits granted</span><span class="value" id="granted">–</span></div>
    <div class="tile"><span class="label">Charged</span><span class="value" id="charged">–</span></div>
    <div class="tile"><span class="label">Refunded</span><span class="value" id="refunded">–</span></div>
    <div class="tile"><span class="label">Closing balance</span><span class="value" id="closing">–</span></div>
    <div class="tile"><span class="label">Calls charged</span><span class="value" id="calls">–</span></div>
  </div>
  <p class="card identity" id="identity" aria-label="How the closing balance comes about">opening + granted − charged + refunded = closing</p>
  <section class="card" aria-labelledby="by-operation-title">
    <h2 id="by-operation-title">By operation</h2>
    ${scrollBox('By operation', '<table id="statement-table"><thead><tr><th scope="col">Operation</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Charged</th><th scope="col" class="num">Refunded</th></tr></thead><tbody></tbody><tfoot></tfoot></table>')}
  </section>
  <section class="card" aria-labelledby="entries-title">
    <h2 id="entries-title">Ledger entries</h2>
    <p id="entries"></p>
    <p><a id="statement-csv" class="button" href="/console/v1/statement" download>Download CSV</a></p>
    <p class="hint">One line per ledger entry of the period, each with its event's log position and hash: their credits add up to closing − opening.</p>
  </section>
</section>`,

  members: `<p id="owners-only" class="card" hidden>Only the workspace's owners see and manage its members. Ask an owner to invite someone or to change a role.</p>
<section class="card" data-owner-only-section>
  <h2>Invite someone</h2>
  <form id="invite-form" class="inline">
    <label>Email <input type="email" name="email" required></label>
    <label>Role <select name="role"><option value="member">member</option><option value="owner">owner</option></select></label>
    <button type="submit">Invite</button>
  </form>
  <p id="invite-sent" class="new-key" hidden>Invitation sent to <strong id="invite-sent-to"></strong>: the one-time link (valid 7 days, works once) is in their mailbox.</p>
</section>
<section class="card" data-owner-only-section>
  <h2>Members</h2>
  ${scrollBox('Members', '<table id="members-table"><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Joined (UTC)</th><th scope="col">Actions</th></tr></thead><tbody></tbody></table>')}
</section>
<section class="card" data-owner-only-section>
  <h2>Pending invitations</h2>
  ${scrollBox('Pending invitations', '<table id="invitations-table"><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Expires (UTC)</th><th scope="col">Actions</th></tr></thead><tbody></tbody></table>')}
</section>`,

  webhooks: `<section class="card" aria-labelledby="create-endpoint-title">
  <h2 id="create-endpoint-title">Add an endpoint</h2>
  <form id="create-endpoint-form">
    <label>URL <input type="url" name="url" maxlength="${WEBHOOK_URL_MAX_CHARS}" placeholder="your receiver's https URL" spellcheck="false" required></label>
    <fieldset class="checks">
      <legend>Event types</legend>
      ${WEBHOOK_EVENT_TYPE_NAMES.map((type) => `<label><input type="checkbox" name="event_types" value="${type}"${type === 'profile.changed' ? ' checked' : ''}> <code>${type}</code> <span class="hint">${inlineCodeHtml(WEBHOOK_EVENT_TYPES[type].description)}</span></label>`).join('\n      ')}
    </fieldset>
    <button type="submit">Add endpoint</button>
    <button type="button" id="cancel-edit" class="secondary" hidden>Cancel</button>
  </form>
  <div id="new-secret" class="new-key" hidden>
    <p class="warning"><strong>Copy this signing secret now.</strong> <span id="new-secret-for"></span> It is shown only this once; receivers verify each delivery's <code>webhook-signature</code> with it (Standard Webhooks).</p>
    <div class="secret"><code id="new-secret-value"></code> <button type="button" id="copy-secret">Copy</button></div>
    <button type="button" id="dismiss-secret" class="secondary">I have stored it</button>
  </div>
</section>
<section class="card" aria-labelledby="endpoints-title">
  <h2 id="endpoints-title">Endpoints</h2>
  <p class="hint">A delivery is retried with backoff for a day; then it is given up and its endpoint marked failing until a delivery succeeds again.</p>
  ${scrollBox('Endpoints', '<table id="endpoints-table"><thead><tr><th scope="col">URL</th><th scope="col">Event types</th><th scope="col">State</th><th scope="col">Created (UTC)</th><th scope="col">Actions</th></tr></thead><tbody></tbody></table>')}
</section>
<section id="deliveries" class="card" aria-labelledby="deliveries-title" hidden>
  <h2 id="deliveries-title">Recent deliveries</h2>
  <p class="hint">Newest first, each with its attempts. A re-send keeps the delivery's <code>webhook-id</code>, so receivers can tell it apart from a new event.</p>
  ${scrollBox('Recent deliveries', '<table id="deliveries-table"><thead><tr><th scope="col">Delivery</th><th scope="col">Event</th><th scope="col">State</th><th scope="col">Created (UTC)</th><th scope="col">Attempts</th><th scope="col">Actions</th></tr></thead><tbody></tbody></table>')}
</section>
<section class="card" aria-labelledby="watches-title">
  <h2 id="watches-title">Watches</h2>
  <p class="hint">Each refresh is charged like a lookup that fetches live, refunded on failure, under the live key you choose (its usage and rate limit); revoking the key deletes its watches. The API creates them too (<code>POST /v1/watches</code>).</p>
  <form id="create-watch-form">
    <label>Lookup <select name="operation">${WATCHED_OPERATIONS.map((w) => `<option value="${w.operation}" data-reference-field="${w.referenceField}">${w.operation}</option>`).join('')}</select></label>
    <label>Reference <input type="text" name="reference" placeholder="a company page, website or profile URL, or a name" spellcheck="false" required></label>
    <label>Every <select name="every">${Object.keys(WATCH_INTERVALS).map((every) => `<option>${every}</option>`).join('')}</select></label>
    <label>Webhook endpoint <select name="webhook_endpoint_id" required></select></label>
    <label>Key <select name="key_id" required></select></label>
    <button type="submit">Add watch</button>
    <p id="watch-form-hint" class="hint" hidden></p>
  </form>
  ${scrollBox('Watches', '<table id="watches-table"><thead><tr><th scope="col">Reference</th><th scope="col">Every</th><th scope="col">State</th><th scope="col">Last run (UTC)</th><th scope="col">Next run (UTC)</th><th scope="col">Actions</th></tr></thead><tbody></tbody></table>')}
</section>`,

  account: `<form id="password-form" class="card narrow">
  <h2>Change password</h2>
  <label>Current password <input type="password" name="current_password" autocomplete="current-password" required></label>
  <label>New password (at least ${PASSWORD_MIN_CHARS} characters) <input type="password" name="new_password" autocomplete="new-password" minlength="${PASSWORD_MIN_CHARS}" required></label>
  <button type="submit">Change password</button>
  <p class="hint">Every other session of yours ends.</p>
</form>`,
};

