import { api, type InvitationCreated, type Members, type Session } from '../api';
import { $, actionButton, cell, el, field, fillBody, guarded, ifConfirmed, showStatus, when } from '../dom';

export async function members(session: Session) {
  if (session.member.role !== 'owner') {
    // Nothing here a member may do: the page says so instead of offering forms that would fail.
    for (const section of document.querySelectorAll<HTMLElement>('[data-owner-only-section]')) section.hidden = true;
    $('#owners-only').hidden = false;
    return;
  }
  const render = async () => {
    const data = await api<Members>('GET', '/console/v1/members');
    fillBody(
      $<HTMLTableElement>('#members-table'),
      data.members.map((m) => {
        const role = el('select', { 'aria-label': `Role of ${m.email}` }, el('option', { value: 'member', text: 'member' }), el('option', { value: 'owner', text: 'owner' }));
        role.value = m.role;
        const actions = el(
          'td',
          { class: 'actions' },
          actionButton({ text: 'Change role', label: `Change the role of ${m.email}` }, async () => {
            await api('PATCH', `/console/v1/members/${encodeURIComponent(m.id)}`, { role: role.value });
            showStatus(`${m.email} is now ${role.value}.`);
            await render();
          }),
          actionButton({ text: 'Remove', label: `Remove ${m.email}`, danger: true }, () =>
            ifConfirmed({ title: 'Remove this member?', text: `${m.email} leaves the workspace; their sessions end at once.`, confirm: 'Remove' }, async () => {
              await api('DELETE', `/console/v1/members/${encodeURIComponent(m.id)}`);
              showStatus(`Removed ${m.email}.`);
              await render();
            }),
          ),
        );
        return el('tr', {}, cell(m.email), el('td', {}, role), cell(when(m.joined_at)), actions);
      }),
      'No members.',
    );
    fillBody(
      $<HTMLTableElement>('#invitations-table'),
      data.invitations.map((i) =>
        el(
          'tr',
          {},
          cell(i.email),
          cell(i.role),
          cell(when(i.expires_at)),
          el(
            'td',
            { class: 'actions' },
            actionButton({ text: 'Cancel', label: `Cancel the invitation of ${i.email}` }, () =>
              ifConfirmed({ title: 'Cancel this invitation?', text: `The link sent to ${i.email} stops working.`, confirm: 'Cancel invitation' }, async () => {
                await api('DELETE', `/console/v1/invitations/${encodeURIComponent(i.id)}`);
                await render();
              }),
            ),
          ),
        ),
      ),
      'No pending invitations.',
    );
  };
  const form = $<HTMLFormElement>('#invite-form');
  form.addEventListener(
    'submit',
    guarded(async (event: Event) => {
      event.preventDefault();
      const invitation = await api<InvitationCreated>('POST', '/console/v1/invitations', { email: field(form, 'email').value, role: field(form, 'role').value });
      form.reset();
      // The table first, so the note shows only once the invitation is listed too.
      await render();
      $('#invite-sent-to').textContent = invitation.email;
      $('#invite-sent').hidden = false;
    }),
  );
  await render();
}
