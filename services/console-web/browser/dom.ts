import { ApiFailure } from './api';

export function $<T extends Element = HTMLElement>(selector: string, root: ParentNode = document): T {
  const node = root.querySelector<T>(selector);
  if (!node) throw new Error(`The page has no ${selector}`);
  return node;
}

/** A form's named control (input, select). */
export const field = (form: HTMLFormElement, name: string) => form.elements.namedItem(name) as HTMLInputElement;

type Attrs = Record<string, string | boolean | null | undefined | ((event: Event) => void)>;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (typeof v === 'function') node.addEventListener(k.slice(2), v);
    else if (k === 'text') node.textContent = String(v);
    else node.setAttribute(k, v === true ? '' : v);
  }
  node.append(...children);
  return node;
}

const numberFormat = new Intl.NumberFormat('en-US');
export const fmt = (n: number) => numberFormat.format(n);
/** An instant as `YYYY-MM-DD HH:MM:SS` (UTC, as every time in the console). */
export const when = (iso: string | null | undefined) => (iso ? iso.replace('T', ' ').slice(0, 19) : '—');

export const cell = (content: string | number | null | undefined | Node, cls?: string) =>
  content instanceof Node ? el('td', { class: cls }, content) : el('td', { text: content === null || content === undefined ? '—' : String(content), class: cls });

/**
 * Fills a table's body. Each cell gets its column's heading as `data-label`: on a phone the
 * stylesheet shows rows as cards, each value under its label.
 */
export function fillBody(table: HTMLTableElement, rows: HTMLTableRowElement[], empty: string) {
  const headings = headingsOf(table);
  for (const row of rows) labelCells(row, headings);
  const body = $('tbody', table);
  body.replaceChildren(...rows);
  if (rows.length === 0) body.append(el('tr', { class: 'empty' }, el('td', { colspan: String(headings.length), text: empty, class: 'empty' })));
}

/** Each cell of a row (a total row too, whose first cell may span columns) gets its column's heading. */
export function labelCells(row: HTMLTableRowElement, headings: string[]) {
  let column = 0;
  for (const c of row.children) {
    const heading = headings[column];
    if (heading && c.tagName === 'TD' && !c.hasAttribute('data-label')) c.setAttribute('data-label', heading);
    column += Number(c.getAttribute('colspan') ?? 1);
  }
}

export const headingsOf = (table: HTMLTableElement) => [...table.querySelectorAll('thead th')].map((th) => th.textContent ?? '');

export function showError(err: unknown) {
  const box = document.getElementById('error');
  if (!box) return;
  if (!err) {
    box.hidden = true;
    box.textContent = '';
    return;
  }
  let message = err instanceof ApiFailure ? err.message : 'Something went wrong. Try again.';
  if (err instanceof ApiFailure && err.details.length > 0) message += ` ${err.details.join(' ')}`;
  box.textContent = message;
  box.hidden = false;
  box.setAttribute('tabindex', '-1');
}

export function showStatus(text: string) {
  const s = document.getElementById('status');
  if (s) s.textContent = text;
}

/** Runs a handler, showing its failure in the page's alert line. */
export const guarded =
  <A extends unknown[]>(fn: (...args: A) => Promise<unknown> | unknown) =>
  async (...args: A) => {
    showError(null);
    try {
      await fn(...args);
    } catch (err) {
      showError(err);
    }
  };

export async function copy(text: string, button: HTMLElement) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch {
    // No clipboard permission (plain http on another host): select it for Ctrl+C.
    const range = document.createRange();
    if (button.previousElementSibling) range.selectNodeContents(button.previousElementSibling);
    getSelection()?.removeAllRanges();
    getSelection()?.addRange(range);
    button.textContent = 'Press Ctrl+C';
  }
}

/**
 * A row's action button: named for what it acts on (`label`, for screen readers), its failure
 * shown in the page's alert line.
 */
export const actionButton = (button: { text: string; label: string; danger?: boolean }, run: () => unknown) =>
  el('button', { type: 'button', class: button.danger ? 'danger' : 'secondary', text: button.text, 'aria-label': button.label, onclick: guarded(run) });

/** Asks first (the dialog below); does `action` only once confirmed. */
export async function ifConfirmed(options: { title: string; text: string; confirm: string }, action: () => Promise<void>): Promise<void> {
  if (await confirmAction(options)) await action();
}

/** The one confirmation dialog of every page (pages.ts renders it): resolves true when confirmed. */
function confirmAction(options: { title: string; text: string; confirm: string }): Promise<boolean> {
  const dialog = $<HTMLDialogElement>('#confirm-dialog');
  $('#confirm-title', dialog).textContent = options.title;
  $('#confirm-text', dialog).textContent = options.text;
  $('#confirm-button', dialog).textContent = options.confirm;
  dialog.returnValue = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'confirm'), { once: true });
    dialog.showModal();
  });
}
