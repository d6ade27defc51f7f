/**
 * An image zoomed over the page: as large as the window allows (small ones scaled up), on a dark
 * backdrop, with its natural size named. One at a time, on document.body: the messages panel
 * opens it (a click or Enter on an image), the app closes it (Esc comes before the session
 * view's own Esc). Focus moves to it and goes back to the image it was opened from.
 */
import { el } from "../render/dom.js";

/** The part of the window the zoomed image may fill. */
const FILL = { width: 0.96, height: 0.88 };

let modal: HTMLElement | null = null;
let returnFocus: HTMLElement | null = null;

/** The image zoomed over the page; a click, Enter or Esc closes it. */
export function openImageModal(src: string, alt: string, from: HTMLElement | null): void {
  closeImageModal();
  const image = el("img", { alt });
  const caption = el("p", { class: "image-modal-caption" });
  const close = el("button", { type: "button", class: "image-modal-close", "aria-label": "Close the image" }, "×");
  modal = el("div", { id: "image-modal", class: "image-modal", role: "dialog", "aria-modal": "true", "aria-label": alt || "Image" }, image, caption, close);
  const fit = () => {
    const { naturalWidth: width, naturalHeight: height } = image;
    if (!width || !height) return;
    const scale = Math.min((window.innerWidth * FILL.width) / width, (window.innerHeight * FILL.height) / height);
    image.style.width = `${Math.round(width * scale)}px`;
    image.style.height = `${Math.round(height * scale)}px`;
    caption.textContent = `${width} × ${height} px, shown at ${Math.round(scale * 100)}%`;
  };
  image.addEventListener("load", fit);
  image.src = src;
  modal.addEventListener("click", () => closeImageModal());
  document.body.append(modal);
  returnFocus = from;
  close.focus();
}

/** Closes the image, if one is open; true when it was. */
export function closeImageModal(): boolean {
  if (!modal) return false;
  modal.remove();
  modal = null;
  returnFocus?.focus();
  returnFocus = null;
  return true;
}
