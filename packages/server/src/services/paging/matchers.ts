/**
 * Label matchers in Alertmanager's syntax (`name=value`, `name!="value"`,
 * `name=~"regex"`, `name!~"regex"`), as in its routes and silences. Regular
 * expressions are anchored at both ends, as Alertmanager anchors them. A
 * label that is absent matches like the empty string (Alertmanager's rule).
 *
 * @example parseMatcher('severity=~"critical|high"').matches({ severity: 'high' }) // true
 */
export interface Matcher {
  name: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
  matches(labels: Record<string, string>): boolean;
}

const MATCHER = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*(.*?)\s*$/s;

/** Parses one matcher; throws an Error whose message says what is wrong (the caller names the field). */
export function parseMatcher(text: string): Matcher {
  const match = MATCHER.exec(text);
  if (!match) {
    throw new Error(
      `"${text.slice(0, 80)}" is not a matcher; write name=value, name!=value, name=~regex or name!~regex`,
    );
  }
  const [, name, op, raw] = match as unknown as [string, string, Matcher['op'], string];
  const value = unquote(raw);
  let test: (candidate: string) => boolean;
  if (op === '=~' || op === '!~') {
    let pattern: RegExp;
    try {
      pattern = new RegExp(`^(?:${value})$`, 's');
    } catch (error) {
      throw new Error(
        `"${text.slice(0, 80)}" has an invalid regular expression (${(error as Error).message})`,
        { cause: error },
      );
    }
    test = (candidate) => pattern.test(candidate);
  } else {
    test = (candidate) => candidate === value;
  }
  const negated = op === '!=' || op === '!~';
  return {
    name,
    op,
    value,
    matches: (labels) => test(labels[name] ?? '') !== negated,
  };
}

/** True when every matcher matches (an empty list matches everything). */
export function matchesAll(matchers: readonly Matcher[], labels: Record<string, string>): boolean {
  return matchers.every((matcher) => matcher.matches(labels));
}

/** A double-quoted value with Go-style escapes (\" \\ \n), or the bare text. */
function unquote(raw: string): string {
  if (!raw.startsWith('"')) {
    if (raw.includes('"'))
      throw new Error(`value ${raw.slice(0, 80)} has a stray quote; quote the whole value`);
    return raw;
  }
  if (raw.length < 2 || !raw.endsWith('"')) throw new Error(`value ${raw.slice(0, 80)} has no closing quote`);
  try {
    return JSON.parse(raw) as string;
  } catch {
    throw new Error(`value ${raw.slice(0, 80)} is not a valid quoted string`);
  }
}
