export type ExpectedVersion = number | 'no_stream' | 'any';

export interface NewEvent {
  type: string;
  data: unknown;
  metadata?: EventMetadata;
}

export interface EventMetadata {
  request_id?: string;
  [key: string]: unknown;
}

export interface RecordedEvent<D = unknown> {
  position: number;
  stream: string;
  version: number;
  type: string;
  data: D;
  metadata: EventMetadata;
  /** xid8 as a decimal string: can exceed 2^53. */
  transactionId: string;
  recordedAt: Date;
}

/** A place in the global order; a subscription resumes strictly after it. */
export interface Checkpoint {
  transactionId: string;
  position: number;
}

export const START: Checkpoint = { transactionId: '0', position: 0 };

export class WrongExpectedVersionError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(`stream ${stream}: expected version ${String(expected)}, actual ${actual}`);
    this.name = 'WrongExpectedVersionError';
  }
}
