// A code block: its language, Copy, Insert at Cursor and New File (the extension does each), and
// the code, highlighted by `lowlight` (highlight.js's grammars, giving a tree, not HTML) once it
// is final: the tree becomes spans with highlight.js's class names, which webview.css colours
// from the VS Code theme. No inline style, no HTML string.
import type { Element as HastElement, ElementContent } from 'hast';
import { createLowlight } from 'lowlight';
import { button, el, Host } from './dom';
import { grammars } from './grammars';

const lowlight = createLowlight(grammars);

/** Longest code highlighted: beyond it, plain (highlighting is synchronous). */
const MAX_HIGHLIGHT = 100_000;

export interface CodeOptions {
  /** highlight the code (not while it streams: each delta draws the block anew) */
  highlight: boolean;
  /** Copy, Insert at Cursor, New File */
  actions: boolean;
  host: Host;
}

/** Whether lowlight knows `lang` (a name or an alias: `py`, `ts`, `sh`). */
export function highlightable(lang: string): boolean {
  return !!lang && lowlight.registered(lang);
}

/** `lang`: the fence's language (see fenceLanguage), '' for none. */
export function codeBlock(code: string, lang: string, o: CodeOptions): HTMLElement {
  const body = el('code', lang ? `language-${lang.replace(/[^\w+#-]/g, '')}` : undefined);
  if (o.highlight && highlightable(lang) && code.length <= MAX_HIGHLIGHT) {
    try {
      appendHast(body, lowlight.highlight(lang, code).children as ElementContent[]);
      body.classList.add('hljs');
    } catch {
      body.replaceChildren(code);
    }
  } else {
    body.textContent = code;
  }
  const pre = el('pre', 'md-code', undefined, body);
  if (!o.actions) return el('div', 'code-block', undefined, pre);
  const copy = button('Copy', 'link code-copy', () => {
    o.host.post({ type: 'copyCode', code });
    copy.textContent = 'Copied';
    setTimeout(() => (copy.textContent = 'Copy'), 1500);
  });
  copy.title = 'Copy the code';
  const insert = button('Insert', 'link code-insert', () => o.host.post({ type: 'insertCode', code }));
  insert.title = 'Insert at Cursor: put the code in place of the selection in the active editor';
  insert.setAttribute('aria-label', 'Insert at Cursor');
  const create = button('New File', 'link code-new-file', () => o.host.post({ type: 'newFile', code, ...(lang ? { language: lang } : {}) }));
  create.title = 'Open the code in a new untitled editor';
  const block = el(
    'div',
    'code-block',
    undefined,
    el('div', 'code-head', undefined, el('span', 'code-lang', lang), el('span', 'code-actions', undefined, copy, insert, create)),
    pre,
  );
  block.setAttribute('role', 'group');
  block.setAttribute('aria-label', lang ? `Code (${lang})` : 'Code');
  return block;
}

/** lowlight's tree as DOM: its elements are spans with class names, its texts text nodes. */
function appendHast(parent: Node, nodes: ElementContent[]) {
  for (const n of nodes) {
    if (n.type === 'text') parent.appendChild(document.createTextNode(n.value));
    else if (n.type === 'element') {
      const span = document.createElement('span');
      const cls = (n as HastElement).properties?.className;
      if (Array.isArray(cls)) span.className = cls.filter((c): c is string => typeof c === 'string' && /^[\w-]+$/.test(c)).join(' ');
      appendHast(span, n.children);
      parent.appendChild(span);
    }
  }
}
