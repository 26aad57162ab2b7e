// A tiny HTTP client for end-to-end tests: real sockets, raw status and headers, and a chosen
// source address, so a test can own a per-IP rate-limit bucket (any 127.x.y.z reaches loopback).
import { request as httpRequest } from 'node:http';
import { randomInt } from 'node:crypto';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the body is JSON, else the raw text. */
  body: any;
}

export interface HttpCall {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as JSON (Content-Type set) unless a string is given. */
  body?: unknown;
  /** Source address of the connection (default: the OS's choice, 127.0.0.1). */
  localAddress?: string;
}

export function call(baseUrl: string, path: string, options: HttpCall = {}): Promise<HttpAnswer> {
  const url = new URL(path, baseUrl);
  const headers: Record<string, string> = { ...options.headers };
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: options.method ?? (payload === undefined ? 'GET' : 'POST'),
        headers,
        localAddress: options.localAddress,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          if (String(res.headers['content-type'] ?? '').includes('json') && text !== '') body = JSON.parse(text);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** A loopback address no other test uses, so its per-IP bucket starts full. */
export function freshLoopbackAddress(): string {
  return `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}

/** Integer value of a header, or NaN when absent. */
export function intHeader(answer: HttpAnswer, name: string): number {
  const v = answer.headers[name.toLowerCase()];
  return v === undefined ? NaN : Number(Array.isArray(v) ? v[0] : v);
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
