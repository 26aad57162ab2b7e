// What a Redis topology (redis-topologies.ts) asks of wherever its servers run: host processes or containers.

export interface RedisProcess {
  port: number;
  /** SIGKILL (`docker kill`): clients see their connections drop with no goodbye. */
  kill(): Promise<void>;
  /** SIGSTOP (`docker pause`): the server stops answering, its connections stay open. */
  freeze(): void;
  /** SIGCONT (`docker unpause`) after a freeze. */
  thaw(): void;
  /** `redis-cli -p <port> <args>`, its output trimmed (empty when it does not answer in 2 s). */
  cli(...args: string[]): string;
  /** The last lines of its log file, for a failure's message. */
  logTail(lines?: number): string;
}

/** Where a topology's servers run; each answers on 127.0.0.1:<port> there and on this machine. */
export interface ServerRunner {
  /** A server with `lines` as its configuration after its port and bind lines; resolves once it answers PING. */
  start(port: number, lines: string[], sentinel?: boolean): Promise<RedisProcess>;
  /** `redis-cli <args>` beside the servers, e.g. `--cluster create`. */
  cli(args: string[], timeoutMs: number): { status: number | null; output: string };
  destroy(): Promise<void>;
}
