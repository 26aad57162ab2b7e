import { ApiFailure, api, type Preview, type Session, useSession } from '../api';
import { $, field, guarded, showError, showStatus } from '../dom';

// A member signs in to one workspace: the page offers the last one used in this browser.
const WORKSPACE_KEY = 'console.workspace';
function rememberWorkspace(id: string) {
  try {
    localStorage.setItem(WORKSPACE_KEY, id);
  } catch {
    // Storage refused (private mode): the member types the id.
  }
}
function rememberedWorkspace() {
  try {
    return localStorage.getItem(WORKSPACE_KEY) ?? '';
  } catch {
    return '';
  }
}

/** The signed-in member and workspace in the header; a member (not owner) loses the Members link. */
export async function loadSession(): Promise<Session> {
  try {
    const session = await api<Session>('GET', '/console/v1/session');
    useSession(session.csrf_token, true);
    rememberWorkspace(session.workspace.id);
    $('#workspace-name').textContent = session.workspace.name;
    $('#member-email').textContent = `${session.member.email} (${session.member.role})`;
    if (session.member.role !== 'owner') for (const a of document.querySelectorAll('[data-owner-only]')) a.parentElement?.remove();
    $('#sign-out').addEventListener(
      'click',
      guarded(async () => {
        await api('DELETE', '/console/v1/session');
        useSession(null, false);
        location.assign('/console');
      }),
    );
    return session;
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) location.assign('/console');
    throw err;
  }
}

export async function signin() {
  const form = $<HTMLFormElement>('#sign-in-form');
  field(form, 'workspace').value = new URLSearchParams(location.search).get('workspace') ?? rememberedWorkspace();
  form.addEventListener(
    'submit',
    guarded(async (event: Event) => {
      event.preventDefault();
      const data = new FormData(form);
      try {
        await api('POST', '/console/v1/session', { workspace_id: String(data.get('workspace')).trim(), email: data.get('email'), password: data.get('password') });
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 429) throw new ApiFailure(429, { error: { message: `${err.message} Try again in ${err.retryAfter} s.` } });
        throw err;
      }
      location.assign('/console/overview');
    }),
  );
}

export async function forgot() {
  const form = $<HTMLFormElement>('#forgot-form');
  field(form, 'workspace').value = rememberedWorkspace();
  form.addEventListener(
    'submit',
    guarded(async (event: Event) => {
      event.preventDefault();
      await api('POST', '/console/v1/password-reset', { workspace_id: field(form, 'workspace').value.trim(), email: field(form, 'email').value });
      form.hidden = true;
      $('#forgot-sent').hidden = false;
    }),
  );
}

export async function reset() {
  const params = new URLSearchParams(location.search);
  const token = params.get('token') ?? '';
  // Out of the address bar and history: the link is a one-time secret.
  history.replaceState(null, '', `/console/reset?workspace=${encodeURIComponent(params.get('workspace') ?? '')}`);
  const form = $<HTMLFormElement>('#reset-form');
  form.addEventListener(
    'submit',
    guarded(async (event: Event) => {
      event.preventDefault();
      await api('POST', '/console/v1/password-reset/complete', { token, new_password: chosenPassword(form) });
      form.hidden = true;
      $('#reset-done').hidden = false;
    }),
  );
}

export async function accept() {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  // Out of the address bar and history: the link is a one-time secret.
  history.replaceState(null, '', '/console/accept');
  const form = $<HTMLFormElement>('#accept-form');
  try {
    const preview = await api<Preview>('GET', `/console/v1/invitations/preview?token=${encodeURIComponent(token)}`);
    $('#invitation-summary').textContent = `You are invited to ${preview.workspace_name} as ${preview.role}. You will sign in with its id, ${preview.workspace_id}, your email and this password.`;
    field(form, 'workspace').value = preview.workspace_id;
    field(form, 'email').value = preview.email;
    form.hidden = false;
  } catch (err) {
    showError(err);
    return;
  }
  form.addEventListener(
    'submit',
    guarded(async (event: Event) => {
      event.preventDefault();
      await api('POST', '/console/v1/invitations/accept', { token, password: chosenPassword(form) });
      location.assign('/console/overview');
    }),
  );
}

export async function account() {
  const form = $<HTMLFormElement>('#password-form');
  form.addEventListener(
    'submit',
    guarded(async (event: Event) => {
      event.preventDefault();
      const session = await api<Session>('POST', '/console/v1/password', { current_password: field(form, 'current_password').value, new_password: field(form, 'new_password').value });
      useSession(session.csrf_token, true);
      form.reset();
      showStatus('Password changed. Your other sessions have ended.');
    }),
  );
}

/** A new password typed twice (the reset and invitation forms): refused here when the two differ. */
function chosenPassword(form: HTMLFormElement): string {
  const password = field(form, 'password').value;
  if (password !== field(form, 'repeat').value) throw new ApiFailure(400, { error: { message: 'The two passwords differ.' } });
  return password;
}
