/** The run's lines on stdout, and its figures as they are printed there and in the report. */

export const say = (line: string): void => void process.stdout.write(`${line}\n`);

export const fmt = (n: number, d = 0): string =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : 'n/a';
