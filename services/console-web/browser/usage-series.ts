import { netCredits } from '../../members/overview';
import type { Key, UsageRow } from './api';
import type { Measure, Series, Split } from './chart';
import { contract } from './contract';
import { keyLabel } from './keys';

/** What a usage row counts for the measure: the credits it cost (the overview's own rule), or its calls. */
const amountOf = (r: UsageRow, measure: Measure) => (measure === 'calls' ? Number(r.calls) : netCredits(r));


/** One series per operation (the contract's order) or per key (the workspace's order), a value per day. */
export function seriesOf(rows: readonly UsageRow[], days: readonly string[], measure: Measure, split: Split, keys: ReadonlyMap<string, Key>): Series[] {
  const index = new Map(days.map((d, i) => [d, i]));
  const byId = new Map<string, number[]>();
  for (const r of rows) {
    const id = split === 'operation' ? r.operation : (r.key_id ?? '');
    const at = index.get(r.day);
    if (at === undefined) continue;
    const values = byId.get(id) ?? days.map(() => 0);
    values[at]! += amountOf(r, measure);
    byId.set(id, values);
  }
  const order = split === 'operation' ? contract.operations : [...keys.keys()];
  const rank = (id: string) => (order.includes(id) ? order.indexOf(id) : order.length);
  return [...byId]
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([id, values]) => ({ id, label: split === 'operation' ? id : keyLabel(keys, id), values }));
}
