const number = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${number.format(n / 1024)} KB`;
  return `${number.format(n / 1024 / 1024)} MB`;
}
