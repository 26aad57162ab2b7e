// Reads a V8 .cpuprofile (node --cpu-prof) and tells where the self time went: by package
// (fastify, pg, ioredis, zod, node core, our services/<area>, ...) and by function.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Share {
  name: string;
  ms: number;
  /** Of all sampled time in the window, idle included. */
  percent: number;
}

export interface ProfileSummary {
  windowMs: number;
  sampledMs: number;
  /** True when the window matched no sample and the whole profile was used instead. */
  wholeProfile: boolean;
  byPackage: Share[];
  byFunction: Share[];
}

/** Where a call frame belongs: a package name, a folder of ours, node core, or a V8 pseudo-frame. */
export function packageOf(url: string, functionName: string, repoRoot: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(V8 builtins)';
  const nodeModules = url.lastIndexOf('/node_modules/');
  if (nodeModules >= 0) {
    const parts = url.slice(nodeModules + '/node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (url.startsWith('wasm://')) return '(wasm: PGlite)';
  if (url.startsWith('node:')) {
    const rest = url.slice('node:'.length).replace(/^internal\//, '');
    return `node:${rest.split('/')[0]}`;
  }
  const path = url.replace(/^file:\/\//, '');
  if (path.startsWith(`${repoRoot}/`)) {
    const parts = path.slice(repoRoot.length + 1).split('/');
    return parts[0] === 'services' || parts[0] === 'test' ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  return `other: ${path}`;
}

const addTo = (totals: Map<string, number>, key: string, us: number) => totals.set(key, (totals.get(key) ?? 0) + us);

/**
 * Self time per package and per function over the samples taken between `window.startUs` and
 * `window.endUs` (the profile's clock, µs). Each sample is charged the time until the next one.
 */
export function summarizeProfile(
  profile: CpuProfile,
  repoRoot: string,
  window?: { startUs: number; endUs: number },
): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const timestamps: number[] = [];
  let t = profile.startTime;
  for (const delta of profile.timeDeltas) timestamps.push((t += delta));

  const inWindow = (i: number) => !window || (timestamps[i]! >= window.startUs && timestamps[i]! <= window.endUs);
  let indices = profile.samples.map((_, i) => i).filter(inWindow);
  const wholeProfile = window !== undefined && indices.length === 0;
  if (wholeProfile) indices = profile.samples.map((_, i) => i);

  const packages = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  for (const i of indices) {
    const next = timestamps[i + 1];
    const us = next === undefined ? 0 : next - timestamps[i]!;
    const frame = byId.get(profile.samples[i]!)!.callFrame;
    const pkg = packageOf(frame.url, frame.functionName, repoRoot);
    const file = frame.url ? frame.url.replace(/^file:\/\//, '').replace(`${repoRoot}/`, '').replace(/.*\/node_modules\//, '') : '';
    // Files compiled by tsx report line 0 for every function: print a line only when there is one.
    const at = file && !file.startsWith('wasm://') ? ` ${file}${frame.lineNumber > 0 ? `:${frame.lineNumber + 1}` : ''}` : '';
    const fn = `${frame.functionName || '(anonymous)'}${at}`;
    addTo(packages, pkg, us);
    addTo(functions, `${fn}  [${pkg}]`, us);
    total += us;
  }
  const shares = (m: Map<string, number>) =>
    [...m.entries()]
      .map(([name, us]) => ({ name, ms: us / 1000, percent: total === 0 ? 0 : (100 * us) / total }))
      .sort((a, b) => b.ms - a.ms);
  return {
    windowMs: window ? (window.endUs - window.startUs) / 1000 : (profile.endTime - profile.startTime) / 1000,
    sampledMs: total / 1000,
    wholeProfile,
    byPackage: shares(packages),
    byFunction: shares(functions),
  };
}

/**
 * The main thread's profile in `dir`. Node names them CPU.<date>.<time>.<pid>.<thread>.<seq>; with
 * tsx the module loader thread writes one too, mostly idle, so thread 0 is the one to read.
 */
export function readMainProfile(dir: string): CpuProfile {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}`);
  const main = files.find((f) => f.split('.')[4] === '0') ?? files.sort()[0]!;
  return JSON.parse(readFileSync(join(dir, main), 'utf8')) as CpuProfile;
}
