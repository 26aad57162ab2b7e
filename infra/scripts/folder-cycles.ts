// `npm run lint:folders`: no two folders of services/ (and contracts/) import each other, however
// indirectly. madge's file graph, mapped to folders; any strongly connected set of folders fails.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Known until the console's routes join the endpoint table (issue 23, §1): remove when gone. */
const KNOWN_CYCLES = [['api', 'console-web']];

const madge = fileURLToPath(import.meta.resolve('madge/bin/cli.js'));
const run = spawnSync(process.execPath, [madge, '--json', '--extensions', 'ts', 'services', 'contracts'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
if (run.status !== 0) {
  process.stderr.write(run.stderr);
  process.exit(1);
}
const files = JSON.parse(run.stdout) as Record<string, string[]>;
const folderOf = (file: string) => (file.startsWith('services/') ? file.split('/')[1]! : file.split('/')[0]!);

const edges = new Map<string, Map<string, string>>();
for (const [from, deps] of Object.entries(files)) {
  for (const to of deps) {
    const [a, b] = [folderOf(from), folderOf(to)];
    if (a === b) continue;
    const out = edges.get(a) ?? new Map<string, string>();
    if (!out.has(b)) out.set(b, `${from} -> ${to}`);
    edges.set(a, out);
  }
}

// Tarjan's strongly connected components over the folders.
const index = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const cycles: string[][] = [];
const visit = (v: string) => {
  index.set(v, index.size);
  low.set(v, index.get(v)!);
  stack.push(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
  }
  if (low.get(v) === index.get(v)) {
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      component.push(w);
    } while (w !== v);
    if (component.length > 1) cycles.push(component.sort());
  }
};
for (const folder of edges.keys()) if (!index.has(folder)) visit(folder);

const known = new Set(KNOWN_CYCLES.map((c) => [...c].sort().join(' ')));
const unexpected = cycles.filter((c) => !known.has(c.join(' ')));
for (const cycle of unexpected) {
  console.error(`folders import each other: ${cycle.join(', ')}`);
  for (const a of cycle) for (const [b, example] of edges.get(a) ?? []) if (cycle.includes(b)) console.error(`  ${a} -> ${b}  (${example})`);
}
if (unexpected.length > 0) process.exit(1);
console.log(`no cycle between folders${cycles.length > 0 ? ` (known, to remove: ${cycles.map((c) => c.join(' <-> ')).join('; ')})` : ''}`);
