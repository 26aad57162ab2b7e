/**
 * A Redis key named `<prefix>{<tag>}`. Redis Cluster places a key by the part in braces alone, so
 * keys that one script touches together (an API key's bucket and its revocation mark) share a
 * hash slot when they share the tag. Every key the service writes is named through here.
 */
export function hashTagged(prefix: string, tag: string): string {
  return `${prefix}{${tag}}`;
}
