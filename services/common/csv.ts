/** RFC 4180 CSV: fields with a comma, quote or line break are quoted; a leading = + - @ is defused for spreadsheets. */
export function toCsv(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  const field = (v: string | number | null) => {
    if (v === null) return '';
    let s = String(v);
    if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return `${[header, ...rows].map((r) => r.map(field).join(',')).join('\r\n')}\r\n`;
}
