// Images in the chat: those pasted or dropped into the composer (thumbnails with a remove ×, sent
// with the message), and stored images (a message's, a browser_action's screenshot), asked of the
// extension once each (fetchImage → modus/chat/image) and kept as data URLs of an image type; an
// <img> waiting for its bytes is filled in place when they come, or says why they did not. A
// click on a message's thumbnail opens it full size in an editor tab.
import type { ImageData, ImageRef } from '../protocol/generated';
import { byId, el, Host } from './dom';
import type { ToWebview } from './messages';

/** The types the server takes, and the size of each (decoded): PROTOCOL.md, "Images". */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];
export const MAX_IMAGES = 10;
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** An image waiting in the composer. */
export interface Attached extends ImageData {
  name: string;
}

export interface Attachments {
  box: HTMLElement;
  items: Attached[];
  /** why the last image was not taken (too large, another type, too many) */
  note: string;
}

export function mountAttachments(): Attachments {
  return { box: byId<HTMLElement>('attachments'), items: [], note: '' };
}

/** The image files of a paste or a drop; true when there were any (the event is then ours). */
export function takeFiles(a: Attachments, files: Iterable<File>): boolean {
  const after = () => renderAttachments(a);
  const images = [...files].filter((f) => f.type.startsWith('image/'));
  for (const file of images) {
    if (!IMAGE_TYPES.includes(file.type)) {
      a.note = `${file.name || file.type}: only PNG, JPEG, WebP and GIF images can be sent`;
      continue;
    }
    if (file.size > MAX_IMAGE_BYTES) {
      a.note = `${file.name || 'the image'}: larger than 5 MiB`;
      continue;
    }
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      if (a.items.length >= MAX_IMAGES) a.note = `at most ${MAX_IMAGES} images a message`;
      else a.items.push({ mimeType: file.type as Attached['mimeType'], data: url.slice(url.indexOf(',') + 1), name: file.name || 'pasted image' });
      after();
    };
    reader.readAsDataURL(file);
  }
  if (images.length) after();
  return images.length > 0;
}

/** The composer's thumbnails, each with its ×; the note of an image not taken. */
export function renderAttachments(a: Attachments) {
  const changed = () => renderAttachments(a);
  a.box.replaceChildren(
    ...a.items.map((item, i) => {
      const img = el('img', 'thumb');
      img.src = `data:${item.mimeType};base64,${item.data}`;
      img.alt = item.name;
      const remove = el('button', 'remove', '×');
      remove.type = 'button';
      remove.title = `Remove ${item.name}`;
      remove.setAttribute('aria-label', `Remove ${item.name}`);
      remove.addEventListener('click', () => {
        a.items.splice(i, 1);
        a.note = '';
        changed();
      });
      return el('span', 'attachment', undefined, img, remove);
    }),
    ...(a.note ? [el('span', 'attachment-note', a.note)] : []),
  );
  a.box.hidden = a.items.length === 0 && !a.note;
}

/** the images fetched: id → data URL */
const urls = new Map<string, string>();
/** the images that could not be had: id → why */
const failed = new Map<string, string>();
/** asked for, not answered yet */
const asking = new Set<string>();

/** The types a data URL of the chat may have (what the server stores). */
const TYPES = new Set(IMAGE_TYPES);

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
    host.post({ type: 'fetchImage', id });
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

/** A stored image's bytes came (`image`), or why not: every <img> of it shows it. */
export function received(m: Extract<ToWebview, { type: 'image' }>) {
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

/** A message's images: thumbnails, fetched when first shown; a click opens one full size. */
export function thumbnails(images: ImageRef[] | undefined, host: Host): HTMLElement | null {
  if (!images?.length) return null;
  return el(
    'div',
    'images',
    undefined,
    ...images.map((image) => {
      const img = storedImage(image.id, `Image (${image.mimeType})`, 'thumb', host);
      img.title = 'Open the image';
      img.tabIndex = 0;
      const open = () => host.post({ type: 'openImage', id: image.id });
      img.addEventListener('click', open);
      img.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          open();
        }
      });
      return img;
    }),
  );
}
