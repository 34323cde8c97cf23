// Stored images in the chat (a browser_action's screenshot): asked of the extension once each
// (image → modus/chat/image), kept as data URLs of an image type; an <img> waiting for its bytes
// is filled in place when they come, or says why they did not.
import { el, Host } from './dom';
import type { ToWebview } from './messages';

/** the images fetched: id → data URL */
const urls = new Map<string, string>();
/** the images that could not be had: id → why */
const failed = new Map<string, string>();
/** asked for, not answered yet */
const asking = new Set<string>();

/** The types a data URL of the chat may have (what the server stores). */
const TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

/** Images kept at most: the oldest fetched are let go (asked for again if shown again). */
const MAX_KEPT = 200;

/** An image stored by the server, by its id: shown once its bytes came (asked for now when not yet). */
export function storedImage(id: string, alt: string, cls: string, host: Host): HTMLImageElement {
  const img = el('img', cls);
  img.alt = alt;
  img.dataset.imageId = id;
  fill(img, id);
  if (!urls.has(id) && !failed.has(id) && !asking.has(id)) {
    asking.add(id);
    host.post({ type: 'image', id });
  }
  return img;
}

function fill(img: HTMLImageElement, id: string) {
  const url = urls.get(id);
  const why = failed.get(id);
  img.classList.toggle('loading', url === undefined && why === undefined);
  img.classList.toggle('failed', why !== undefined);
  if (url !== undefined) img.src = url;
  if (why !== undefined) img.title = `The image could not be shown: ${why}`;
}

function received(m: Extract<ToWebview, { type: 'image' }>) {
  asking.delete(m.id);
  if (typeof m.data === 'string' && typeof m.mimeType === 'string' && TYPES.has(m.mimeType)) {
    urls.set(m.id, `data:${m.mimeType};base64,${m.data}`);
    if (urls.size > MAX_KEPT) urls.delete(urls.keys().next().value!);
  } else {
    failed.set(m.id, m.error ?? `not an image (${m.mimeType ?? 'no type'})`);
  }
  for (const img of document.querySelectorAll<HTMLImageElement>('img[data-image-id]')) {
    if (img.dataset.imageId === m.id) fill(img, m.id);
  }
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const m = event.data;
  if (m && typeof m === 'object' && m.type === 'image' && typeof m.id === 'string') received(m);
});
