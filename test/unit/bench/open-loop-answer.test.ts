import { describe, expect, it } from 'vitest';
import { parseAnswer } from '../../bench/open-loop';

const answer = (text: string) => Buffer.from(text, 'latin1');

describe('where an HTTP/1.1 answer ends, for the open-loop generator', () => {
  it('given an answer with Content-Length, when complete, then it ends after that many body bytes and the next answer is left', () => {
    const one = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}';
    expect(parseAnswer(answer(`${one}HTTP/1.1 2`))).toEqual({ status: 200, length: one.length });
  });

  it('given an answer whose body has not all arrived, when read, then it is incomplete', () => {
    expect(parseAnswer(answer('HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n{"a"'))).toBeUndefined();
    expect(parseAnswer(answer('HTTP/1.1 200 OK\r\ncontent-len'))).toBeUndefined();
  });

  it('given a chunked answer, when its last chunk has arrived, then it ends after the empty trailer line', () => {
    const body = '7\r\n{"a":1}\r\n0\r\n\r\n';
    const text = `HTTP/1.1 429 Too Many Requests\r\ntransfer-encoding: chunked\r\n\r\n${body}`;
    expect(parseAnswer(answer(text))).toEqual({ status: 429, length: text.length });
    expect(parseAnswer(answer(text.slice(0, -2)))).toBeUndefined();
  });

  it('given an answer with no length at all, or not HTTP/1.1, when read, then it refuses rather than guess', () => {
    expect(() => parseAnswer(answer('HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nbody'))).toThrow(/neither Content-Length/);
    expect(() => parseAnswer(answer('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n'))).toThrow(/not an HTTP\/1.1 answer/);
  });
});
