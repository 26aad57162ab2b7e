import { isDeepStrictEqual } from 'node:util';

/** What a refresh found against what the watch saw last. */
export type ProfileChange = { changed: false } | { changed: true; beforeHash: string; afterHash: string; changedFields: string[] };

/**
 * A profile changed when its content_hash did. The first sighting (nothing seen before) is the
 * baseline, no change. The changed fields are the top-level fields of `data` added, removed or
 * different, sorted.
 */
export function detectProfileChange(
  before: { contentHash: string; data: Record<string, unknown> } | null,
  after: { contentHash: string; data: Record<string, unknown> },
): ProfileChange {
  if (before === null || before.contentHash === after.contentHash) return { changed: false };
  const fields = new Set([...Object.keys(before.data), ...Object.keys(after.data)]);
  const changedFields = [...fields].filter((field) => !isDeepStrictEqual(before.data[field], after.data[field])).sort();
  return { changed: true, beforeHash: before.contentHash, afterHash: after.contentHash, changedFields };
}
