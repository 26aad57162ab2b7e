import { api, type Key } from './api';
import { el } from './dom';

/** The workspace's keys by id, oldest first: every page names keys by their name. */
export async function loadKeys(): Promise<Map<string, Key>> {
  const { data } = await api<{ data: Key[] }>('GET', '/console/v1/keys');
  return new Map(data.map((k) => [k.id, k]));
}

export const keyLabel = (keys: ReadonlyMap<string, Key>, id: string | null) => {
  if (id === null) return '—';
  const key = keys.get(id);
  return key ? (key.name ?? `${key.prefix}… (unnamed)`) : id;
};

/** A key by its name, its id on hover. */
export const keyName = (keys: ReadonlyMap<string, Key>, id: string | null): Node | string =>
  id === null ? '—' : el('span', { class: 'key', title: id, text: keyLabel(keys, id) });
