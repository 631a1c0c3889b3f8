/**
 * Where the keyboard focus goes when the element holding it leaves the page.
 *
 * A button that removes what it sits in (an override's Delete, a place's
 * Remove, "Make X the default", a key's Revoke) is gone once the page is
 * drawn again, and the browser then drops the focus to the page's body: a
 * keyboard or screen reader user starts again from the top. Once for the
 * whole app, this puts it where the pressed element was instead, as the
 * WAI-ARIA Authoring Practices ask of a removed item:
 *
 * 1. a list item gone (`<li>`): the same control of the next item (Delete
 *    of the next override), else of the one before; with no item left to
 *    land on, the list's heading (given `tabindex="-1"` to hold the focus),
 *    else the first control after the list (the "Add" control: the person
 *    picker below a rotation's places);
 * 2. a part of something that stays: the nearest container around it that
 *    takes the focus itself (the incident's Actions group), else the first
 *    control of its list item (a queue row's title, where the keys act on
 *    the same incident; a schedule's name once "Make it the default" went);
 *    else the nearest control after it, or before it;
 * 3. else the page's `<main>`.
 *
 * A page that knows better sets the focus itself in its effects: this acts
 * after them (the next frame), and only if the focus is still on the body,
 * so a page's own choice and a focus the person moved meanwhile win. (The
 * queue and the incident page place it themselves, where rule 2 would.)
 *
 * An element the page drew again elsewhere (a keyed item moved) keeps the
 * focus it had: it is the same element, and the browser dropped the focus
 * only because it was taken out to be put back.
 */
const FOCUSABLE =
  'a[href], button, input:not([type="hidden"]), select, textarea, summary, [tabindex]:not([tabindex="-1"])';

/** The controls `element` is or holds that can take the focus now, in document order. */
const controlsOf = (element: Element): HTMLElement[] =>
  [element, ...element.querySelectorAll(FOCUSABLE)].filter(
    (one): one is HTMLElement =>
      one instanceof HTMLElement &&
      one.matches(FOCUSABLE) &&
      !one.hasAttribute('disabled') &&
      one.getClientRects().length > 0,
  );

/** Whether the focus has nowhere to be but the page itself: it fell off a removed element. */
const focusIsLost = () => document.activeElement === null || document.activeElement === document.body;

/** The heading that names `list`: the one it is labelled by, else the nearest before it in its container. */
function headingOf(list: Element): HTMLElement | undefined {
  const labelledBy = list.getAttribute('aria-labelledby');
  const labelled = labelledBy === null ? null : document.getElementById(labelledBy);
  if (labelled !== null) return labelled;
  for (let before = list.previousElementSibling; before !== null; before = before.previousElementSibling)
    if (/^H[1-6]$/.test(before.tagName)) return before as HTMLElement;
  return undefined;
}

/**
 * Where the focus goes when a part of something that stays went from
 * `parent`: the nearest container that takes the focus itself, else the
 * first control of the nearest list item; `<main>` is the last resort, not a
 * container for this.
 */
function holderWithin(parent: Element): HTMLElement | undefined {
  for (let around: Element | null = parent; around !== null; around = around.parentElement) {
    if (around.tagName === 'MAIN' || around === document.body) return undefined;
    if (around instanceof HTMLElement && around.hasAttribute('tabindex')) return around;
    if (around.tagName === 'LI') {
      const first = controlsOf(around)[0];
      if (first !== undefined) return first;
    }
  }
  return undefined;
}

/**
 * Where the focus goes, `removed` having been taken out of `parent` between
 * `previous` and `next` with `lost` (the focused element) inside it.
 */
function landingFor(
  lost: Element,
  removed: Element,
  parent: Node,
  previous: Node | null,
  next: Node | null,
): HTMLElement | undefined {
  if (removed.tagName !== 'LI' && parent instanceof Element && parent.isConnected) {
    const holder = holderWithin(parent);
    if (holder !== undefined) return holder;
  }
  // The same control of a neighbour of the same kind (Delete of the next override, not its name's
  // link), counted among the removed one's controls as they were: a removed tree keeps its children.
  const place = removed === lost ? 0 : [...removed.querySelectorAll(FOCUSABLE)].indexOf(lost);
  const sameKind = (neighbour: Element) => neighbour.tagName === removed.tagName;
  const connected = (node: Node | null) => (node instanceof Element && node.isConnected ? node : null);
  for (let after = connected(next); after !== null; after = after.nextElementSibling) {
    const found = controlsOf(after);
    const landing = sameKind(after) ? (found[place] ?? found[0]) : found[0];
    if (landing !== undefined) return landing;
  }
  for (let before = connected(previous); before !== null; before = before.previousElementSibling) {
    // Of another kind, the nearest control before: the last of the element before, not its first.
    const found = controlsOf(before);
    const landing = sameKind(before) ? (found[place] ?? found[0]) : found.at(-1);
    if (landing !== undefined) return landing;
  }
  if (!(parent instanceof Element) || !parent.isConnected) return undefined;
  const heading = headingOf(parent);
  if (heading !== undefined) {
    if (!heading.matches(FOCUSABLE) && !heading.hasAttribute('tabindex')) heading.tabIndex = -1;
    return heading;
  }
  for (let after = parent.nextElementSibling; after !== null; after = after.nextElementSibling) {
    const landing = controlsOf(after)[0];
    if (landing !== undefined) return landing;
  }
  return undefined;
}

/** After the page's own effects have run (Preact runs them after the next frame, in a task). */
function afterPageEffects(work: () => void) {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    setTimeout(work);
  };
  requestAnimationFrame(once);
  setTimeout(once, 100); // no frames in a hidden tab; Preact falls back the same way
}

/**
 * Watches `root` from now on; call once at start-up. Answers a function that
 * stops watching.
 */
export function keepFocusWhenRemoved(root: HTMLElement = document.body): () => void {
  let focused: Element | null = document.activeElement;
  // The page the focused element was on: when a link or a button takes the person to another page,
  // the old page's elements go with it, and that is no removal to recover from.
  let focusedOn = location.pathname;
  const onFocusIn = (event: FocusEvent) => {
    if (!(event.target instanceof Element)) return;
    focused = event.target;
    focusedOn = location.pathname;
  };
  document.addEventListener('focusin', onFocusIn);
  const observer = new MutationObserver((records) => {
    const lost = focused;
    if (lost === null || lost === document.body || location.pathname !== focusedOn || !focusIsLost()) return;
    const record = records.find((one) =>
      [...one.removedNodes].some((node) => node === lost || node.contains(lost)),
    );
    if (record === undefined) return;
    let landing: HTMLElement | undefined;
    if (lost.isConnected) landing = lost as HTMLElement;
    else {
      const removed = [...record.removedNodes].find(
        (node) => node === lost || node.contains(lost),
      ) as Element;
      landing = landingFor(lost, removed, record.target, record.previousSibling, record.nextSibling);
    }
    afterPageEffects(() => {
      if (!focusIsLost()) return;
      const target =
        landing?.isConnected === true ? landing : (document.querySelector<HTMLElement>('main') ?? undefined);
      target?.focus();
    });
  });
  observer.observe(root, { childList: true, subtree: true });
  return () => {
    observer.disconnect();
    document.removeEventListener('focusin', onFocusIn);
  };
}
