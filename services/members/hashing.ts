import { HASHING_CONCURRENCY, hashingAdmits } from './rules';

/** Too many password hashes asked of this instance, in total or by the client address. */
export class HashingBusyError extends Error {
  constructor() {
    super('password hashing is busy');
  }
}

/** A place in the queue: run one hash with it, or give it back. */
export interface HashingTicket {
  run<T>(work: () => Promise<T>): Promise<T>;
  release(): void;
}

/**
 * Every password hash (scrypt, ~32 MiB and tens of ms of a core each) of one instance goes
 * through here: at most HASHING_CONCURRENCY at a time, a short FIFO queue behind them, and a
 * share per client address (rules.ts, `hashingAdmits`). A caller that finds it full is refused at
 * once (429) instead of waiting behind someone's flood of sign-ins for unknown emails.
 */
export class HashingQueue {
  private admitted = 0;
  private running = 0;
  private readonly byAddress = new Map<string, number>();
  private readonly waiting: Array<() => void> = [];

  /** Throws HashingBusyError when the instance or the address already has its share. */
  admit(address: string): HashingTicket {
    const ofAddress = this.byAddress.get(address) ?? 0;
    if (!hashingAdmits({ total: this.admitted, ofAddress })) throw new HashingBusyError();
    this.admitted++;
    this.byAddress.set(address, ofAddress + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.admitted--;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left === 0) this.byAddress.delete(address);
      else this.byAddress.set(address, left);
    };
    return {
      release,
      run: async (work) => {
        try {
          await this.slot();
          try {
            return await work();
          } finally {
            this.handOver();
          }
        } finally {
          release();
        }
      },
    };
  }

  /** Hashes running and admitted now (for metrics and tests). */
  load(): { running: number; admitted: number } {
    return { running: this.running, admitted: this.admitted };
  }

  private async slot(): Promise<void> {
    if (this.running < HASHING_CONCURRENCY) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** The slot of a finished hash goes to the next in line as it is (`running` unchanged), or is freed. */
  private handOver() {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
