// `npm run lint:folders` (beside madge's file-level `lint:cycles`): no two folders import each other, even
// through others. Every TypeScript file is mapped to its folder (`services/<name>`, `contracts`,
// `test/<tier>`, `infra/<name>`; deeper folders count as their parent's), each import (type-only
// ones included: they couple the folders as much) to the folder of the file it names, and any
// strongly connected set of two or more folders is a cycle, and fails. KNOWN_CYCLE_EDGES lists
// the folder imports that close the cycles still to be taken apart: they are left out of the graph
// (so any other cycle fails), and each is reported until it is gone.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOP_FOLDERS = ['services', 'contracts', 'test', 'infra'];
/** `from -> to` folder imports that close a known cycle, allowed until that cycle is taken apart. */
const KNOWN_CYCLE_EDGES: readonly string[] = [];

function* tsFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* tsFiles(path);
    else if (/\.(?:ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** `services/http/admission/plugin.ts` -> `services/http`; `contracts/http.ts` -> `contracts`. */
function folderOf(file: string): string {
  const parts = relative(ROOT, file).split(/[\\/]/);
  return parts[0] === 'contracts' || parts.length <= 2 ? parts[0]! : `${parts[0]}/${parts[1]}`;
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*\(?\s*['"]([^'"]+)['"]/gm;

function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of source.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2]!;
    if (specifier.startsWith('.')) found.push(resolve(dirname(file), specifier));
  }
  return found;
}

/** Tarjan's strongly connected components of the folder graph, those of two or more folders. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const graph = new Map<string, Set<string>>();
/** One import per folder pair, to name in a report. */
const example = new Map<string, string>();
for (const top of TOP_FOLDERS) {
  for (const file of tsFiles(join(ROOT, top))) {
    const from = folderOf(file);
    if (!graph.has(from)) graph.set(from, new Set());
    for (const target of importsOf(file)) {
      const to = folderOf(target);
      if (to === from || !TOP_FOLDERS.includes(to.split('/')[0]!)) continue;
      graph.get(from)!.add(to);
      if (!example.has(`${from} ${to}`)) example.set(`${from} ${to}`, `${relative(ROOT, file)} -> ${relative(ROOT, target)}`);
    }
  }
}

const known = new Set(KNOWN_CYCLE_EDGES);
const withoutKnown = new Map([...graph].map(([from, tos]) => [from, new Set([...tos].filter((to) => !known.has(`${from} -> ${to}`)))]));
const found = cycles(withoutKnown);
for (const component of found) {
  const edges = [...example].filter(([pair]) => {
    const [a, b] = pair.split(' ');
    return component.includes(a!) && component.includes(b!) && !known.has(`${a} -> ${b}`);
  });
  console.error(`folder cycle: ${component.join(' <-> ')}\n${edges.map(([, at]) => `  ${at}`).join('\n')}`);
}
// The known edges: still closing a cycle (to be taken apart), or no longer (to be struck off the list).
const allCycles = cycles(graph);
for (const edge of KNOWN_CYCLE_EDGES) {
  const [from, to] = edge.split(' -> ') as [string, string];
  const closing = graph.get(from)?.has(to) && allCycles.some((c) => c.includes(from) && c.includes(to));
  console.warn(closing ? `known folder cycle edge (to take apart): ${edge}: ${example.get(`${from} ${to}`)}` : `known folder cycle edge no longer closes a cycle, strike it off KNOWN_CYCLE_EDGES: ${edge}`);
}
if (found.length > 0) {
  console.error(`folder cycles: ${found.length}`);
  process.exitCode = 1;
}
