// Script arguments typed in an input box: split the way a POSIX shell splits words
// (quotes and backslashes), and joined back for display so that a round trip is exact.

export class ArgumentError extends Error {}

export function splitArguments(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charAt(i);
    if (quote === "'") {
      if (ch === "'") {
        quote = null;
      } else {
        word += ch;
      }
    } else if (quote === '"') {
      if (ch === '"') {
        quote = null;
      } else if (ch === "\\" && i + 1 < text.length && '"\\$`'.includes(text.charAt(i + 1))) {
        word += text.charAt(++i);
      } else {
        word += ch;
      }
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === "\\") {
      if (i + 1 >= text.length) {
        throw new ArgumentError("a backslash ends the arguments");
      }
      word += text.charAt(++i);
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) {
        words.push(word);
        word = "";
        inWord = false;
      }
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote !== null) {
    throw new ArgumentError(`unterminated ${quote === '"' ? "double" : "single"} quote`);
  }
  if (inWord) {
    words.push(word);
  }
  return words;
}

const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

export function joinArguments(args: readonly string[]): string {
  return args.map((arg) => (PLAIN.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(" ");
}
