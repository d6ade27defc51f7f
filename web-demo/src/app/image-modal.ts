/**
 * An image at full size over the page. One at a time, on document.body: the messages panel opens
 * it (a click on an image), the app closes it (Esc comes before the session view's own Esc).
 */
import { el } from "../render/dom.js";

let modal: HTMLElement | null = null;

/** The image at full size over the page; a click or Esc closes it. */
export function openImageModal(src: string, alt: string): void {
  closeImageModal();
  const image = el("img", { alt });
  image.src = src;
  modal = el("div", { id: "image-modal", class: "image-modal", role: "dialog", "aria-label": "Image" }, image);
  modal.addEventListener("click", closeImageModal);
  document.body.append(modal);
}

/** Closes the image, if one is open; true when it was. */
export function closeImageModal(): boolean {
  if (!modal) return false;
  modal.remove();
  modal = null;
  return true;
}
