// What the chat's panels share: building elements (every text set with textContent), the
// header's icons, placing a node among its siblings, and the Host a panel posts and re-renders through.
import type { FromWebview } from './messages';

/** What a panel is given: the posting of a message to the extension, and a new rendering of the chat. */
export interface Host {
  post(m: FromWebview): void;
  render(): void;
}

export const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string,
  ...children: (Node | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  for (const c of children) if (c) node.appendChild(c);
  return node;
}

export function button(label: string, cls: string, onClick: () => void): HTMLButtonElement {
  const b = el('button', cls, label);
  b.type = 'button';
  b.addEventListener('click', onClick);
  return b;
}

const SVG = 'http://www.w3.org/2000/svg';
/** The header's icons (16×16, stroked in the text colour unless they say otherwise). */
const ICONS: Record<string, [string, Record<string, string>][]> = {
  stop: [['rect', { x: '4', y: '4', width: '8', height: '8', rx: '1', fill: 'currentColor', stroke: 'none' }]],
  plus: [['path', { d: 'M8 3v10M3 8h10' }]],
  /** the team space: two people */
  people: [
    ['circle', { cx: '6', cy: '5.5', r: '2.2' }],
    ['path', { d: 'M2 13c0-2.4 1.8-4 4-4s4 1.6 4 4' }],
    ['circle', { cx: '11.2', cy: '6', r: '1.8' }],
    ['path', { d: 'M11.5 9.3c1.5.2 2.5 1.5 2.5 3.2' }],
  ],
  history: [
    ['circle', { cx: '8', cy: '8', r: '5.5' }],
    ['path', { d: 'M8 5v3.2l2.2 1.6' }],
  ],
};

export function icon(name: string): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('aria-hidden', 'true');
  for (const [tag, attrs] of ICONS[name] ?? []) {
    const shape = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) shape.setAttribute(k, v);
    svg.appendChild(shape);
  }
  return svg;
}

/** Puts `node` right after `prev` (first when null) among `parent`'s children; returns it. */
export function place(parent: Element, node: Element, prev: Element | null): Element {
  const want = prev ? prev.nextElementSibling : parent.firstElementChild;
  if (want !== node) parent.insertBefore(node, want);
  return node;
}
