/**
 * A grow-only set of key fingerprints: the first 64 bits of each key's SHA-256, in one typed array
 * (open addressing, linear probing, at most half full), so a million keys take 16 MiB and no
 * object per key.
 *
 * It answers "certainly not a key" or "maybe a key": two keys sharing a fingerprint only make one
 * of them look known, which costs one database check, never a wrong refusal. For that reason
 * nothing is ever removed (removing one of two keys that share a fingerprint would hide the other).
 */
export class KeyFingerprintSet {
  /** Pairs (high, low) of 32-bit halves; (0, 0) marks an empty slot. */
  private slots: Uint32Array;
  private count = 0;

  constructor(initialCapacity = 1024) {
    this.slots = new Uint32Array(2 * capacityFor(initialCapacity));
  }

  get size(): number {
    return this.count;
  }

  /** Bytes held by the table. */
  get bytes(): number {
    return this.slots.byteLength;
  }

  /** Adds the key whose SHA-256 is `keyHashHex` (at least 16 hex digits are read). */
  add(keyHashHex: string): void {
    const [high, low] = fingerprintOf(keyHashHex);
    if (2 * (this.count + 1) > this.slots.length / 2) this.grow();
    if (insert(this.slots, high, low)) this.count++;
  }

  has(keyHashHex: string): boolean {
    const [high, low] = fingerprintOf(keyHashHex);
    const mask = this.slots.length / 2 - 1;
    for (let i = low & mask; ; i = (i + 1) & mask) {
      const h = this.slots[2 * i]!;
      const l = this.slots[2 * i + 1]!;
      if (h === high && l === low) return true;
      if (h === 0 && l === 0) return false;
    }
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    for (let i = 0; i < old.length; i += 2) {
      if (old[i] !== 0 || old[i + 1] !== 0) insert(this.slots, old[i]!, old[i + 1]!);
    }
  }
}

/** Whether it was new. The table always has an empty slot (it is kept at most half full). */
function insert(slots: Uint32Array, high: number, low: number): boolean {
  const mask = slots.length / 2 - 1;
  for (let i = low & mask; ; i = (i + 1) & mask) {
    const h = slots[2 * i]!;
    const l = slots[2 * i + 1]!;
    if (h === high && l === low) return false;
    if (h === 0 && l === 0) {
      slots[2 * i] = high;
      slots[2 * i + 1] = low;
      return true;
    }
  }
}

/** SHA-256 bits are uniform, so the low half indexes the table as it is; (0, 0) is moved off the empty mark. */
function fingerprintOf(keyHashHex: string): [number, number] {
  if (!/^[0-9a-f]{16}/i.test(keyHashHex)) throw new RangeError('a key hash starts with 16 hex digits');
  const high = Number.parseInt(keyHashHex.slice(0, 8), 16);
  const low = Number.parseInt(keyHashHex.slice(8, 16), 16);
  return high === 0 && low === 0 ? [0, 1] : [high, low];
}

/** The power of two slots that holds `entries` at most half full. */
function capacityFor(entries: number): number {
  let capacity = 16;
  while (capacity < 2 * entries) capacity *= 2;
  return capacity;
}
