// Markdown read by a kept parser, `marked`'s lexer (the parser VS Code's own chat uses): tokens,
// never HTML. render.ts builds elements from them with textContent and DOM calls only, so raw
// HTML in a reply stays text. This part has no DOM: what a token means (a link's target, an
// entity, a plan's section) is decided here and tested without a browser.
import { Lexer, type Token, type Tokens } from 'marked';
import { hrefPath, type PathRef } from './paths';

export type { Token, Tokens };

/** The block tokens of `source` (GitHub-flavoured: tables, task lists, strikethrough, bare URLs). A
 * fence still open at the end (mid-stream) is a code block to the end, as CommonMark says. */
export function lex(source: string): Token[] {
  return Lexer.lex(source, { gfm: true, breaks: false });
}

/** The inline tokens of one line of text (a plan step, a summary). */
export function lexInline(source: string): Token[] {
  return Lexer.lexInline(source, { gfm: true, breaks: false });
}

/** Where a link goes: a web page (http or https only), a file of the workspace (the extension
 * says whether it is one), or nowhere (`javascript:`, `data:`, `file:`, `command:`, `mailto:`,
 * an anchor…): then the link stays text. */
export type LinkTarget = { kind: 'web'; url: string } | { kind: 'path'; ref: PathRef } | null;

export function linkTarget(href: string): LinkTarget {
  const h = href.trim();
  // a scheme (two letters at least: `C:` is a drive); browsers ignore tabs and newlines in one
  const scheme = /^([A-Za-z][A-Za-z0-9+.\-]+):/.exec(h.replace(/[\t\n\r]/g, ''));
  if (scheme) {
    if (!/^https?$/i.test(scheme[1])) return null;
    try {
      const url = new URL(h);
      return url.protocol === 'http:' || url.protocol === 'https:' ? { kind: 'web', url: url.href } : null;
    } catch {
      return null;
    }
  }
  if (h.startsWith('//')) return null; // scheme-relative: a host, not a file
  const ref = hrefPath(h);
  return ref ? { kind: 'path', ref } : null;
}

const ENTITIES: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', copy: '©', reg: '®', trade: '™',
  hellip: '…', mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«',
  raquo: '»', times: '×', divide: '÷', middot: '·', bull: '•', deg: '°', plusmn: '±', larr: '←',
  rarr: '→', uarr: '↑', darr: '↓', harr: '↔', rArr: '⇒', lArr: '⇐', ne: '≠', le: '≤', ge: '≥',
  check: '✓', cross: '✗', sect: '§', para: '¶', euro: '€', pound: '£', yen: '¥', cent: '¢',
};

/** A text token's entities (`&amp;`, `&#8594;`, `&#x2192;`) as the characters they stand for;
 * an unknown one stays as written. The lexer leaves them to the renderer. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));/g, (all, dec, hex, name) => {
    if (name) return ENTITIES[name] ?? all;
    const code = dec ? Number(dec) : parseInt(hex, 16);
    return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ? '\ufffd' : String.fromCodePoint(code);
  });
}

/** The heading element for a Markdown heading's depth, under the sidebar's own (h1 and h2 are not the chat's to take). */
export function headingTag(depth: number): 'h3' | 'h4' | 'h5' | 'h6' {
  return depth <= 1 ? 'h3' : depth === 2 ? 'h4' : depth === 3 ? 'h5' : 'h6';
}

/** The tokens of the section under the heading `title`, to the next heading as high or higher. */
export function section(tokens: Token[], title: string): Token[] {
  const start = tokens.findIndex((t) => t.type === 'heading' && t.text === title);
  if (start < 0) return [];
  const depth = (tokens[start] as Tokens.Heading).depth;
  const end = tokens.findIndex((t, i) => i > start && t.type === 'heading' && (t as Tokens.Heading).depth <= depth);
  return tokens.slice(start + 1, end < 0 ? undefined : end).filter((t) => t.type !== 'space');
}

/** The first words of a fence's info string, as a language name (`py`, `typescript`), or ''. */
export function fenceLanguage(lang: string | undefined): string {
  return (lang ?? '').trim().split(/\s+/)[0].replace(/^\{?\.?/, '').replace(/\}$/, '').toLowerCase();
}
