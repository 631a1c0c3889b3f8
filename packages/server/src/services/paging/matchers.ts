/**
 * Label matchers in Alertmanager's syntax (`name=value`, `name!="value"`,
 * `name=~"regex"`, `name!~"regex"`, `"utf8.name"=value`), as in its routes and silences. Regular
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

// A label name bare, or double-quoted for any UTF-8 name (`"service.name"`), as Alertmanager 0.27+ takes it.
const MATCHER = /^\s*([a-zA-Z_][a-zA-Z0-9_]*|"(?:[^"\\]|\\.)+")\s*(=~|!~|!=|=)\s*(.*?)\s*$/s;

/** Parses one matcher; throws an Error whose message says what is wrong (the caller names the field). */
export function parseMatcher(text: string): Matcher {
  const match = MATCHER.exec(text);
  if (!match) {
    throw new Error(
      `"${text.slice(0, 80)}" is not a matcher; write name=value, name!=value, name=~regex or name!~regex`,
    );
  }
  const [, rawName, op, raw] = match as unknown as [string, string, Matcher['op'], string];
  const name = unquote(rawName);
  const value = unquote(raw);
  let test: (candidate: string) => boolean;
  if (op === '=~' || op === '!~') {
    // Anchored as Alertmanager anchors it, ^(?:…)$, with no flag of its own:
    // "." stops at a newline unless the pattern says (?s). Go's flag groups,
    // "(?i)critical" at the start as anywhere else, become scoped modifiers.
    let pattern: RegExp;
    try {
      pattern = new RegExp(`^(?:${scopedFlagGroups(value)})$`);
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

/**
 * Go's flag groups inside a pattern, `a(?i)b`, as JavaScript's scoped
 * modifiers: RE2 applies `(?flags)` to the rest of the enclosing group, each
 * alternative after it included, and JavaScript refuses the bare form, so
 * `a(?i)b|c` becomes `a(?i:b)|(?i:c)`. Escapes and character classes are
 * copied as they are; anything else JavaScript then refuses stays an error.
 *
 * @example scopedFlagGroups('db-(?i)prod|staging') // 'db-(?i:prod)|(?i:staging)'
 */
function scopedFlagGroups(source: string): string {
  if (!source.includes('(?')) return source;
  let out = '';
  // Per open group: the modifiers opened in it so far, to close at its end and reopen after each `|`.
  const groups: string[][] = [[]];
  const closeAll = (modifiers: string[]) => ')'.repeat(modifiers.length);
  for (let index = 0; index < source.length; index++) {
    const char = source[index]!;
    if (char === '\\') {
      out += source.slice(index, index + 2);
      index++;
    } else if (char === '[') {
      // A class runs to the first `]` that is not its first member or escaped.
      let end = index + 1;
      if (source[end] === '^') end++;
      if (source[end] === ']') end++;
      while (end < source.length && source[end] !== ']') end += source[end] === '\\' ? 2 : 1;
      out += source.slice(index, end + 1);
      index = end;
    } else if (char === '(') {
      const flags = /^\(\?([a-zA-Z]*(?:-[a-zA-Z]*)?)\)/.exec(source.slice(index));
      if (flags && flags[1] !== '' && flags[1] !== '-') {
        const opener = `(?${flags[1]}:`;
        groups.at(-1)!.push(opener);
        out += opener;
        index += flags[0].length - 1;
      } else {
        groups.push([]);
        out += char;
      }
    } else if (char === '|') {
      const modifiers = groups.at(-1)!;
      out += closeAll(modifiers) + '|' + modifiers.join('');
    } else if (char === ')') {
      out += closeAll(groups.length > 1 ? groups.pop()! : []) + ')';
    } else {
      out += char;
    }
  }
  return out + closeAll(groups[0]!);
}

/**
 * RE2 syntax (Alertmanager's engine) that JavaScript's reads otherwise,
 * silently: a POSIX class (`[[:alpha:]]`) is a set of characters and a
 * colon, `\z` a "z", `\p{Greek}` a "p": a policy would never match.
 */
const RE2_ONLY = /\[\[:\^?[a-z]+:\]|\\[zAQpP]|\[:\^?[a-z]+:\]\]/;

/**
 * Parses a matcher being saved (a policy, window or heartbeat): as
 * `parseMatcher`, and refuses regex syntax that would not mean what it means
 * in Alertmanager. Stored matchers are read with `parseMatcher` alone.
 */
export function parseMatcherToSave(text: string): Matcher {
  const matcher = parseMatcher(text);
  if ((matcher.op === '=~' || matcher.op === '!~') && RE2_ONLY.test(matcher.value)) {
    throw new Error(
      `"${text.slice(0, 80)}" uses regular expression syntax of Alertmanager's RE2 that terdut reads otherwise ` +
        '(POSIX classes such as [[:alpha:]], \\z, \\A, \\Q…\\E, \\p{…}); write it with plain classes such as [A-Za-z] or $',
    );
  }
  return matcher;
}

/** True when every matcher matches (an empty list matches everything). */
export function matchesAll(matchers: readonly Matcher[], labels: Record<string, string>): boolean {
  return matchers.every((matcher) => matcher.matches(labels));
}

/**
 * A double-quoted value, unescaped as Alertmanager unescapes it (\" \\ \n;
 * a backslash before anything else stays a backslash, so `"db\d+\.prod"`
 * keeps its regex escapes), or the bare text.
 */
function unquote(raw: string): string {
  if (!raw.startsWith('"')) {
    if (raw.includes('"'))
      throw new Error(`value ${raw.slice(0, 80)} has a stray quote; quote the whole value`);
    return raw;
  }
  const body = raw.slice(1);
  let value = '';
  let closed = false;
  for (let index = 0; index < body.length; index++) {
    const char = body[index]!;
    if (closed) throw new Error(`value ${raw.slice(0, 80)} has text after its closing quote`);
    if (char === '\\' && index < body.length - 1) {
      const next = body[++index]!;
      value += next === 'n' ? '\n' : next === '"' || next === '\\' ? next : `\\${next}`;
    } else if (char === '"') {
      closed = true;
    } else {
      value += char;
    }
  }
  if (!closed) throw new Error(`value ${raw.slice(0, 80)} has no closing quote`);
  return value;
}
