// Images in the chat: those pasted or dropped into the composer (thumbnails with a remove ×, sent
// with the message), and the thumbnails of a message's stored images, whose bytes the extension
// fetches (`modus/chat/image`) when first shown. A click on one opens it full size in an editor tab.
import type { ImageData, ImageRef } from '../protocol/generated';
import { byId, el, Host } from './dom';

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

/** The bytes of stored images as data URLs, by id, once fetched; those asked for. */
const fetched = new Map<string, string>();
const asked = new Set<string>();

/** A message's images: thumbnails, fetched when first shown; a click opens one full size. */
export function thumbnails(images: ImageRef[] | undefined, host: Host): HTMLElement | null {
  if (!images?.length) return null;
  return el(
    'div',
    'images',
    undefined,
    ...images.map((image) => {
      const img = el('img', 'thumb');
      img.dataset.imageId = image.id;
      img.alt = `Image (${image.mimeType})`;
      img.title = 'Open the image';
      img.tabIndex = 0;
      const src = fetched.get(image.id);
      if (src) img.src = src;
      else if (!asked.has(image.id)) {
        asked.add(image.id);
        host.post({ type: 'fetchImage', id: image.id });
      }
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

/** A stored image's bytes came (`image`): every thumbnail of it shows it. */
export function received(id: string, mimeType: string, data: string) {
  const src = `data:${mimeType};base64,${data}`;
  fetched.set(id, src);
  for (const img of document.querySelectorAll<HTMLImageElement>('img.thumb[data-image-id]')) {
    if (img.dataset.imageId === id) img.src = src;
  }
}
