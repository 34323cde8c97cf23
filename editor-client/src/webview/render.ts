// Markdown as elements: the tokens of markdown.ts, each built with DOM calls and every text set
// as a text node. What a reply cannot do here: raw HTML (`<img onerror>`, `<script>`) and images
// show as the text that was written; a link opens only a web page (http, https) or a file of the
// workspace, through the extension; anything else (`javascript:`, `command:`, `file:`…) is its
// text. Used for the assistant's replies, attempt_completion's result and the plan document.
import { codeBlock } from './code';
import { el, Host } from './dom';
import { linkPaths, pathLink, webLink } from './links';
import { decodeEntities, fenceLanguage, headingTag, lex, lexInline, linkTarget, Token, Tokens } from './markdown';

export interface RenderOptions {
  host: Host;
  /** the text is final: code is highlighted and paths are asked about (not while it streams) */
  final: boolean;
  /** code blocks without Copy, Insert at Cursor and New File (the plan card: a compact summary) */
  noCodeActions?: boolean;
  /** inside a link's label: no path in it becomes a link of its own */
  inLink?: boolean;
}

/** A text's runs: its paths links (see links.ts), unless it is a link's label already. */
function texts(text: string, o: RenderOptions): Node[] {
  return o.inLink ? [document.createTextNode(text)] : linkPaths(text, o.host, o.final);
}

/** `source` as Markdown, in a `div.md` (plus `cls`). */
export function renderMarkdown(source: string, o: RenderOptions, cls?: string): HTMLElement {
  return renderTokens(lex(source), o, cls);
}

/** What a Markdown box shows: its options and, for each block token, the token's source and its node. */
const drawn = new WeakMap<HTMLElement, { o: RenderOptions; blocks: { raw: string; node: Node | null }[] }>();

/** Block tokens (e.g. a section of a document) in a `div.md` (plus `cls`). */
export function renderTokens(tokens: Token[], o: RenderOptions, cls?: string): HTMLElement {
  const box = el('div', cls ? `md ${cls}` : 'md');
  drawn.set(box, { o, blocks: tokens.map((t) => ({ raw: t.raw, node: appendBlock(box, t, o) })) });
  return box;
}

/**
 * Brings a box of renderMarkdown's to `source` in place: the blocks whose source is the same are
 * kept, the others drawn anew. While a reply streams that is its last block or two a frame, not
 * the whole reply. False when `box` is not one of renderMarkdown's.
 */
export function patchMarkdown(box: HTMLElement, source: string): boolean {
  const d = drawn.get(box);
  if (!d) return false;
  const tokens = lex(source);
  let same = 0;
  while (same < tokens.length && same < d.blocks.length && tokens[same].raw === d.blocks[same].raw) same++;
  for (const { node } of d.blocks.slice(same)) node?.parentNode?.removeChild(node);
  d.blocks = [...d.blocks.slice(0, same), ...tokens.slice(same).map((t) => ({ raw: t.raw, node: appendBlock(box, t, d.o) }))];
  return true;
}

function appendBlock(parent: HTMLElement, t: Token, o: RenderOptions): Node | null {
  const node = block(t, o);
  if (node) parent.appendChild(node);
  return node;
}

/** One line of Markdown (code spans, emphasis, links) appended to `parent`. */
export function renderInline(parent: HTMLElement, source: string, o: RenderOptions): HTMLElement {
  inline(parent, lexInline(source), o);
  return parent;
}

const ALIGN: Record<string, string> = { left: 'align-left', center: 'align-center', right: 'align-right' };

function blocks(parent: HTMLElement, tokens: Token[], o: RenderOptions) {
  for (const t of tokens) appendBlock(parent, t, o);
}

function block(t: Token, o: RenderOptions): Node | null {
  switch (t.type) {
    case 'space':
    case 'def': // a link reference's definition shows nothing; its links use it
      return null;
    case 'paragraph':
      return inline(el('p'), (t as Tokens.Paragraph).tokens, o);
    case 'text': {
      // a tight list item's text
      const text = t as Tokens.Text;
      return text.tokens ? inline(el('span', 'md-text'), text.tokens, o) : inline(el('span', 'md-text'), [t], o);
    }
    case 'heading': {
      const h = t as Tokens.Heading;
      return inline(el(headingTag(h.depth)), h.tokens, o);
    }
    case 'code': {
      const c = t as Tokens.Code;
      // its actions once the reply is final: while it streams the block is drawn anew at each delta
      return codeBlock(c.text, fenceLanguage(c.lang), { highlight: o.final, actions: o.final && !o.noCodeActions, host: o.host });
    }
    case 'blockquote': {
      const q = el('blockquote');
      blocks(q, (t as Tokens.Blockquote).tokens, o);
      return q;
    }
    case 'hr':
      return el('hr');
    case 'list':
      return list(t as Tokens.List, o);
    case 'table':
      return table(t as Tokens.Table, o);
    case 'checkbox':
      return mark((t as Tokens.Checkbox).checked);
    case 'html':
      // raw HTML is shown as it was written
      return el('p', 'md-html', t.raw.replace(/\n+$/, ''));
    default:
      return el('p', undefined, t.raw);
  }
}

function mark(checked: boolean): HTMLElement {
  const m = el('span', 'md-mark', checked ? '☑' : '☐');
  m.setAttribute('role', 'img');
  m.setAttribute('aria-label', checked ? 'done' : 'not done');
  return m;
}

function list(l: Tokens.List, o: RenderOptions): HTMLElement {
  const box = l.ordered ? el('ol') : el('ul');
  if (l.ordered && typeof l.start === 'number' && l.start !== 1) (box as HTMLOListElement).start = l.start;
  if (l.items.some((i) => i.task)) box.classList.add('md-tasks');
  for (const item of l.items) {
    const li = el('li');
    if (item.task) li.className = item.checked ? 'md-task checked' : 'md-task';
    blocks(li, item.tokens, o);
    box.appendChild(li);
  }
  return box;
}

function table(t: Tokens.Table, o: RenderOptions): HTMLElement {
  const cell = (tag: 'th' | 'td', c: Tokens.TableCell) => {
    const node = inline(el(tag), c.tokens, o);
    if (c.align) node.className = ALIGN[c.align];
    return node;
  };
  const head = el('tr');
  for (const c of t.header) head.appendChild(cell('th', c));
  const body = el('tbody');
  for (const row of t.rows) {
    const tr = el('tr');
    for (const c of row) tr.appendChild(cell('td', c));
    body.appendChild(tr);
  }
  return el('div', 'md-table', undefined, el('table', undefined, undefined, el('thead', undefined, undefined, head), body));
}

function inline(parent: HTMLElement, tokens: Token[] | undefined, o: RenderOptions): HTMLElement {
  for (const t of tokens ?? []) parent.append(...inlineNodes(t, o));
  return parent;
}

function inlineNodes(t: Token, o: RenderOptions): Node[] {
  switch (t.type) {
    case 'text': {
      const text = t as Tokens.Text;
      if (text.tokens) return [inline(el('span'), text.tokens, o)];
      return texts(decodeEntities(text.text), o);
    }
    case 'escape':
      return [document.createTextNode((t as Tokens.Escape).text)];
    case 'strong':
      return [inline(el('strong'), (t as Tokens.Strong).tokens, o)];
    case 'em':
      return [inline(el('em'), (t as Tokens.Em).tokens, o)];
    case 'del':
      return [inline(el('del'), (t as Tokens.Del).tokens, o)];
    case 'codespan': {
      const code = el('code');
      code.append(...texts((t as Tokens.Codespan).text, o));
      // a code span that is one path: the whole span is the link
      const only = code.childNodes.length === 1 && code.firstChild instanceof HTMLAnchorElement ? code.firstChild : null;
      if (only) {
        code.replaceChildren(...only.childNodes);
        only.replaceChildren(code);
        return [only];
      }
      return [code];
    }
    case 'br':
      return [el('br')];
    case 'checkbox':
      return [mark((t as Tokens.Checkbox).checked)];
    case 'link': {
      const l = t as Tokens.Link;
      const target = linkTarget(l.href);
      if (!target) return [document.createTextNode(t.raw)];
      const label = inline(el('span'), l.tokens, { ...o, inLink: true });
      if (target.kind === 'web') return [webLink(target.url, [...label.childNodes], o.host)];
      return pathLink(target.ref, [...label.childNodes], o.host, o.final);
    }
    case 'image':
    case 'html':
      // images are not loaded and raw HTML is not markup: both show as written
      return [document.createTextNode(t.raw)];
    default:
      return [document.createTextNode(t.raw)];
  }
}
