/**
 * Quotes a word for a POSIX shell, so a line printed for pasting (`export
 * KUBECONFIG=…` from `npm run kube:up`) works whatever the path holds: the
 * checkout may live in a folder whose name has a space.
 */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
