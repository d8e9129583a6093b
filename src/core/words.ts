/** Counts in the texts people and models read: `1 item`, `1,234 items`. */

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** `text` as a sentence: a capital first, one full stop last (none after "?" or "!"). */
export function sentence(text: string): string {
  const capital = /^[a-z]/.test(text) ? text[0]!.toUpperCase() + text.slice(1) : text;
  return /[.?!]$/.test(capital) ? capital : `${capital}.`;
}
