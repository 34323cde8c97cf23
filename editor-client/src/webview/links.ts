// Links in the chat: web pages (http and https only) and places in the workspace's files. A click
// asks the extension (openLink, openPath), which checks again and does it: the webview navigates
// nowhere itself, so its links carry no href. A path is a link only once the extension has said it
// is a file inside the workspace (resolvePaths → paths): until then it is text, marked as pending;
// the answer makes it a link in place, or plain text.
import { el, Host } from './dom';
import type { FromWebview, ToWebview } from './messages';
import { describeRef, PathRef, splitPaths } from './paths';

/** paths the extension said are files of the workspace: as written → workspace-relative */
const files = new Map<string, string>();
/** paths asked about, not answered yet */
const asking = new Set<string>();
/** paths to ask about once this rendering is done */
let queue: string[] = [];
let post: ((m: FromWebview) => void) | null = null;

/** Most paths asked about in one message. */
const MAX_ASK = 200;

/** A web link: its text, the address in its tooltip; a click (or Enter) asks the extension to open it. */
export function webLink(url: string, children: Node[], host: Host): HTMLElement {
  post = host.post;
  const a = el('a', 'md-link web-link');
  a.append(...children);
  a.dataset.url = url;
  a.title = url;
  a.setAttribute('role', 'link');
  a.tabIndex = 0;
  return a;
}

/**
 * A place in a workspace file: a link when the extension knows the path as a file of the
 * workspace, else pending (asked about when `ask`, e.g. once a reply has stopped streaming) or text.
 */
export function pathLink(ref: PathRef, children: Node[], host: Host, ask: boolean): Node[] {
  post = host.post;
  const file = files.get(ref.path);
  if (file === undefined && !ask) return children;
  const a = el('a', 'path-ref');
  a.append(...children);
  a.dataset.path = ref.path;
  if (ref.line) a.dataset.line = String(ref.line);
  if (ref.column) a.dataset.column = String(ref.column);
  if (file !== undefined) makeLink(a, file);
  else request(ref.path);
  return [a];
}

/** A text whose paths are links (see pathLink); each run of it a text node or a link. */
export function linkPaths(text: string, host: Host, ask: boolean): Node[] {
  const out: Node[] = [];
  for (const run of splitPaths(text)) {
    const node = document.createTextNode(run.text);
    if (run.ref) out.push(...pathLink(run.ref, [node], host, ask));
    else out.push(node);
  }
  return out;
}

function refOf(a: HTMLElement): PathRef {
  const ref: PathRef = { path: a.dataset.path! };
  if (a.dataset.line) ref.line = Number(a.dataset.line);
  if (a.dataset.column) ref.column = Number(a.dataset.column);
  return ref;
}

function makeLink(a: HTMLElement, file: string) {
  a.className = 'md-link path-link';
  a.setAttribute('role', 'link');
  a.tabIndex = 0;
  a.title = `Open ${describeRef(file, refOf(a))}`;
}

function request(path: string) {
  if (asking.has(path)) return;
  asking.add(path);
  if (queue.push(path) === 1) queueMicrotask(flush);
}

function flush() {
  const paths = queue;
  queue = [];
  for (let i = 0; i < paths.length; i += MAX_ASK) post?.({ type: 'resolvePaths', paths: paths.slice(i, i + MAX_ASK) });
}

/** The extension's answer: each path asked about is a file of the workspace (its relative path) or not (null). */
function resolved(answer: Record<string, string | null>) {
  for (const [path, file] of Object.entries(answer)) {
    asking.delete(path);
    if (typeof file === 'string') files.set(path, file);
  }
  for (const a of document.querySelectorAll<HTMLElement>('a.path-ref')) {
    const path = a.dataset.path!;
    if (!(path in answer)) continue;
    const file = files.get(path);
    if (file !== undefined) makeLink(a, file);
    else a.replaceWith(...a.childNodes);
  }
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const m = event.data;
  if (m && typeof m === 'object' && m.type === 'paths' && m.paths && typeof m.paths === 'object') resolved(m.paths);
});

function follow(a: HTMLElement) {
  if (a.classList.contains('web-link')) post?.({ type: 'openLink', url: a.dataset.url! });
  else if (a.classList.contains('path-link')) post?.({ type: 'openPath', ...refOf(a) });
}

document.addEventListener('click', (event) => {
  const a = (event.target as Element | null)?.closest?.<HTMLElement>('a.md-link');
  if (!a) return;
  event.preventDefault();
  follow(a);
});

document.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter') return;
  const a = (event.target as Element | null)?.closest?.<HTMLElement>('a.md-link');
  if (!a) return;
  event.preventDefault();
  follow(a);
});
