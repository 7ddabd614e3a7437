/** Building DOM nodes without innerHTML (no markup from data, nothing inline for the CSP to refuse). */

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | null | undefined | EventListener>;

/** An element with attributes (`on...` keys are listeners; false/null/undefined values are left out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function clear(element: Element): void {
  element.replaceChildren();
}

/** Tell screen-reader users what changed (an aria-live region in index.html). */
export function announce(message: string): void {
  const announcer = document.getElementById('announcer');
  if (announcer) announcer.textContent = message;
}

/** A table wrapped so that it scrolls sideways on narrow screens instead of widening the page. */
export function scrollingTable(caption: string, head: string[], rows: Child[][], attributes: Attributes = {}): HTMLElement {
  return h(
    'div',
    { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': caption },
    h(
      'table',
      attributes,
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, ...head.map((label) => h('th', { scope: 'col' }, label)))),
      h(
        'tbody',
        {},
        ...rows.map((cells) => h('tr', {}, ...cells.map((cell, i) => (i === 0 ? h('th', { scope: 'row' }, cell) : h('td', {}, cell))))),
      ),
    ),
  );
}
