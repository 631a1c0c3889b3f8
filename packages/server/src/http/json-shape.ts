/**
 * How a JSON text is built, read in one pass without parsing it: how deep it
 * nests, how many objects and arrays it holds, and how many members.
 *
 * Why before parsing: the heap and the time a parsed body takes depend on
 * its shape, not only its size. An Alertmanager notification takes about 2.5
 * times its bytes (the webhook's body budget counts on that), but 7.6 MiB of
 * `[` nested four million deep became some 50 times that, and three such
 * notifications at once ended the process at its heap limit; four million
 * numbers in one array held the event loop for 1.7 s. Strings are skipped
 * with `indexOf`, so a notification, which is mostly strings, costs little
 * to read (about a third of parsing it).
 */
export interface JsonShape {
  /** The deepest nesting of objects and arrays (a flat object is 1). */
  depth: number;
  /** Objects and arrays in all. */
  containers: number;
  /**
   * Members of all objects and arrays together, at most: an object or array
   * of n members has n − 1 commas, so this is the commas plus the containers
   * (an empty one counts 1).
   */
  members: number;
  /** Members of the largest object or array nested at most `WIDTHS_TRACKED_TO_DEPTH` deep, at most. */
  widest: number;
}

/** Widths are tracked this deep; a body nested deeper is refused for its depth anyway. */
export const WIDTHS_TRACKED_TO_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** The shape of `text`, which need not be valid JSON (the parser judges that). */
export function jsonShape(text: string): JsonShape {
  let depth = 0;
  let deepest = 0;
  let containers = 0;
  let commas = 0;
  let widest = 0;
  // Commas so far in the open container at each depth (index 1 is the outermost).
  const commasAt = new Int32Array(WIDTHS_TRACKED_TO_DEPTH + 1);
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      index = closingQuote(text, index);
    } else if (code === COMMA) {
      commas++;
      if (depth > 0 && depth <= WIDTHS_TRACKED_TO_DEPTH) {
        const members = ++commasAt[depth]! + 1;
        if (members > widest) widest = members;
      }
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      containers++;
      if (++depth > deepest) deepest = depth;
      if (depth <= WIDTHS_TRACKED_TO_DEPTH) commasAt[depth] = 0;
      if (widest === 0) widest = 1;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return { depth: deepest, containers, members: commas + containers, widest };
}

/** The index of the quote that closes the string opening at `open` (the end if none does). */
function closingQuote(text: string, open: number): number {
  for (let at = text.indexOf('"', open + 1); at !== -1; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return text.length;
}
