/**
 * Image URLs for a session's image blocks: inline base64 as a data: URL, stored blobs
 * ("blob:sha256:…") read from the store on first view and shown through a blob: URL, cached.
 * Only raster image types reach here (render/entry.ts checks the MIME type first).
 */
import { BLOB_REF_PREFIX, BlobStore } from "../../../src/blobs/blob-store.js";
import type { StoragePort } from "../../../src/port.js";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export class ImageSources {
  readonly #blobs: BlobStore;
  readonly #urls = new Map<string, Promise<string | null>>();

  constructor(storage: StoragePort) {
    this.#blobs = new BlobStore(storage);
  }

  source(block: { data: string; mimeType: string }): string | Promise<string | null> | null {
    const { data, mimeType } = block;
    if (data.startsWith(BLOB_REF_PREFIX)) {
      const key = `${data}|${mimeType}`;
      let url = this.#urls.get(key);
      if (!url) {
        url = this.#blobs.get(data).then(
          (bytes) => (bytes ? URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: mimeType })) : null),
          () => null,
        );
        this.#urls.set(key, url);
      }
      return url;
    }
    return data.length > 0 && BASE64.test(data) ? `data:${mimeType};base64,${data}` : null;
  }

  /** Frees the blob: URLs. */
  dispose(): void {
    for (const url of this.#urls.values()) void url.then((u) => u && URL.revokeObjectURL(u));
    this.#urls.clear();
  }
}
