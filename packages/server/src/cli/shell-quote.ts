/**
 * Quotes a word for a POSIX shell, so a line printed for pasting works
 * whatever the path holds (a folder whose name has a space): the bootstrap
 * line `serve` prints (`$(cat <token file>)`) and `npm run kube:up`'s
 * `export KUBECONFIG=…`.
 */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
