// A tiny markdown reader for the plan document the server writes (server/plan/markdown.py):
// headings, list items (with [x] / [ ] boxes, nested by indent), fenced code, paragraphs, and
// inline code spans. It gives blocks, not HTML: the webview builds elements from them and sets
// every text with textContent, so nothing in a plan can become markup.

export type Block =
  | { type: 'heading'; level: number; text: string }
  | { type: 'item'; depth: number; text: string; checked?: boolean }
  | { type: 'code'; text: string }
  | { type: 'paragraph'; text: string };

export function parseMarkdown(source: string): Block[] {
  const blocks: Block[] = [];
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  // the block that a non-blank, non-marker line continues (a blank line ends a paragraph)
  let open: Extract<Block, { type: 'item' | 'paragraph' }> | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^(\s*)(`{3,}|~{3,})/.exec(line);
    if (fence) {
      const [, indent, marks] = fence;
      const body: string[] = [];
      for (i++; i < lines.length; i++) {
        const close = /^\s*(`+|~+)\s*$/.exec(lines[i]);
        if (close && close[1][0] === marks[0] && close[1].length >= marks.length) break;
        body.push(lines[i].startsWith(indent) ? lines[i].slice(indent.length) : lines[i].trimStart());
      }
      blocks.push({ type: 'code', text: body.join('\n') });
      open = null;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    const item = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    if (heading) {
      blocks.push({ type: 'heading', level: heading[1].length, text: heading[2] });
      open = null;
    } else if (item) {
      const box = /^\[([ xX])\]\s+(.*)$/.exec(item[2]);
      const depth = Math.floor(item[1].replace(/\t/g, '  ').length / 2);
      open = box ? { type: 'item', depth, text: box[2], checked: box[1] !== ' ' } : { type: 'item', depth, text: item[2] };
      blocks.push(open);
    } else if (!line.trim()) {
      if (open?.type === 'paragraph') open = null;
    } else if (open && (open.type === 'paragraph' || /^\s/.test(line))) {
      open.text += '\n' + line.trim();
    } else {
      open = { type: 'paragraph', text: line.trim() };
      blocks.push(open);
    }
  }
  return blocks;
}

/** A text split into plain runs and inline code spans (CommonMark: a run of n backticks to the next run of n). */
export function inlineCode(text: string): { code: boolean; text: string }[] {
  const parts: { code: boolean; text: string }[] = [];
  let plain = '';
  let i = 0;
  while (i < text.length) {
    const run = /^`+/.exec(text.slice(i));
    if (!run) {
      plain += text[i++];
      continue;
    }
    const ticks = run[0];
    const close = new RegExp(`(?<!\`)${ticks}(?!\`)`, 'g');
    close.lastIndex = i + ticks.length;
    const end = close.exec(text);
    if (!end) {
      plain += ticks;
      i += ticks.length;
      continue;
    }
    let code = text.slice(i + ticks.length, end.index);
    if (code.length > 1 && code.startsWith(' ') && code.endsWith(' ') && code.trim()) code = code.slice(1, -1);
    if (plain) parts.push({ code: false, text: plain });
    parts.push({ code: true, text: code });
    plain = '';
    i = end.index + ticks.length;
  }
  if (plain) parts.push({ code: false, text: plain });
  return parts;
}

/** The blocks of the section under the heading `title`, to the next heading as high or higher. */
export function section(blocks: Block[], title: string): Block[] {
  const start = blocks.findIndex((b) => b.type === 'heading' && b.text === title);
  if (start < 0) return [];
  const level = (blocks[start] as Extract<Block, { type: 'heading' }>).level;
  const end = blocks.findIndex((b, i) => i > start && b.type === 'heading' && b.level <= level);
  return blocks.slice(start + 1, end < 0 ? undefined : end);
}
