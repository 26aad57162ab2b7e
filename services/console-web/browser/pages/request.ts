import { ApiFailure, api, type RequestStory } from '../api';
import { $, cell, el, field, fillBody, fmt, when } from '../dom';
import { keyName, loadKeys } from '../keys';

/** A request id as a link to its story. */
export const requestLink = (id: string | null) => (id === null ? '—' : el('a', { href: `/console/request?${new URLSearchParams({ id })}`, class: 'mono', text: id }));

/** One call's whole story: how it ended, its ledger entries and refund, the events it appended. */
export async function request() {
  const id = new URLSearchParams(location.search).get('id')?.trim() ?? '';
  field($<HTMLFormElement>('#request-search'), 'id').value = id;
  if (id === '') return;
  const [keys, story] = await Promise.all([
    loadKeys(),
    api<RequestStory>('GET', `/console/v1/requests/${encodeURIComponent(id)}`).catch((err: unknown) => {
      if (err instanceof ApiFailure && err.status === 404) throw new ApiFailure(404, { error: { message: `No call of this workspace has the request id ${id}.` } });
      throw err;
    }),
  ]);
  const set = (selector: string, content: string | Node) => $(selector).replaceChildren(content);
  const c = story.call;
  set('#story-request', story.request_id);
  set('#story-operation', c?.operation ?? '—');
  set('#story-key', c ? keyName(keys, c.key_id) : '—');
  set('#story-time', when(c?.recorded_at));
  set('#story-status', c ? statusText(c) : 'not ended');
  set('#story-cache', c?.cache_status ?? '—');
  set('#story-charged', c ? `${fmt(c.credits_charged)} credits` : '—');
  set('#story-refund', story.refund ? `${fmt(story.refund.credits)} credits (${story.refund.cause}), ${when(story.refund.recorded_at)}` : 'no');
  set('#story-hash', story.content_hash ?? '— (no profile fetched by this call)');
  fillBody(
    $<HTMLTableElement>('#story-ledger'),
    story.ledger.map((e) => el('tr', {}, cell(e.position, 'num'), cell(when(e.recorded_at)), cell(e.type), cell(e.credits > 0 ? `+${fmt(e.credits)}` : fmt(e.credits), 'num'), cell(fmt(e.balance_after), 'num'))),
    'No ledger entries.',
  );
  fillBody(
    $<HTMLTableElement>('#story-events'),
    story.events.map((e) => el('tr', {}, cell(e.position, 'num'), cell(when(e.recorded_at)), cell(e.type), cell(e.stream, 'mono'))),
    'No events.',
  );
  $('#story').hidden = false;
  for (const section of document.querySelectorAll<HTMLElement>('[data-story]')) section.hidden = false;
  $('#story').dataset.requestId = story.request_id;
}

/** A STALE call answered 200 with a cached copy; its `error_code` is the failed fetch the copy stood in for. */
function statusText(c: NonNullable<RequestStory['call']>): string {
  if (c.cache_status === 'STALE') return `${c.status} (found: a cached copy, the live fetch failed with ${c.error_code ?? 'an error'})`;
  return `${c.status}${c.error_code ? ` ${c.error_code}` : ''} (${c.outcome === 'error' ? 'an error' : c.outcome === 'not_found' ? 'not found: an answer' : 'found'})`;
}
