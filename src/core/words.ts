/** Counts in the texts people and models read: `1 item`, `1,234 items`. */

export function count(n: number): string {
  // Whole numbers grouped here: Intl's number formatting costs a process 5 to 10 ms to set up,
  // and tool declarations state their page sizes with it when they load.
  if (Number.isSafeInteger(n) && !Object.is(n, -0)) return String(n).replace(/\B(?=(\d{3})+$)/g, ',');
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
