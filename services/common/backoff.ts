/** Exponential backoff, capped, with jitter (half fixed, half random); `random` is injected for tests. */
export function backoffDelayMs(
  failures: number,
  { initialMs = 250, maxMs = 30_000 }: { initialMs?: number; maxMs?: number } = {},
  random: () => number = Math.random,
): number {
  if (failures <= 0) return 0;
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(failures - 1, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
