/**
 * Image blocks {type:"image", data, mimeType} inside `content` arrays: externalized into the blob
 * store when their base64 is at least 1024 chars, resolved back to base64 on load, and put in the
 * form a store keeps (`imagesInForm`; session/store-owner.ts says whose store keeps which). A
 * synchronous scan finds them first, so entries without images (nearly all) cost no async work;
 * the input is never mutated (copies are made along changed paths only).
 */
import { base64ToBytes, bytesToBase64 } from "./base64.js";
import { BLOB_REF_PREFIX, parseBlobRef, type BlobStore } from "./blob-store.js";

export const EXTERNALIZE_MIN_BASE64 = 1024;

/**
 * How a store's session files hold images: "inline" base64 (pi, xcsh, indusagi, the Python
 * agent), or "blob-refs", `blob:sha256:<hex>` refs to `blobs/<hex>` for those of 1024 base64
 * characters or more (oh-my-pi's own form, and sessionkit's stores).
 */
export type ImageForm = "inline" | "blob-refs";

/** Where blobs are read from and put. */
export type BlobReader = Pick<BlobStore, "get">;
export type BlobWriter = Pick<BlobStore, "put">;

interface ImageBlock {
  type: "image";
  data: string;
  [key: string]: unknown;
}

function isImageBlock(value: unknown): value is ImageBlock {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { type?: unknown }).type === "image" &&
    typeof (value as { data?: unknown }).data === "string"
  );
}

/** Visits every image block of every `content` array in `value`. */
function forEachContentImage(value: unknown, visit: (block: ImageBlock) => void, inContent = false): void {
  if (Array.isArray(value)) {
    for (const item of value) {
      if (inContent && isImageBlock(item)) visit(item);
      else if (typeof item === "object" && item !== null) forEachContentImage(item, visit);
    }
  } else if (typeof value === "object" && value !== null) {
    for (const key in value) {
      const item = (value as Record<string, unknown>)[key];
      if (typeof item === "object" && item !== null) forEachContentImage(item, visit, key === "content");
    }
  }
}

/** Copy of `value` with the blocks in `replacements` given new data; shares everything else. */
function withReplacedImages(value: unknown, replacements: ReadonlyMap<ImageBlock, string>): unknown {
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const data = isImageBlock(item) ? replacements.get(item) : undefined;
      const next = data !== undefined ? { ...(item as ImageBlock), data } : typeof item === "object" && item !== null ? withReplacedImages(item, replacements) : item;
      if (next !== item) (copy ??= value.slice())[i] = next;
    });
    return copy ?? value;
  }
  if (typeof value === "object" && value !== null) {
    let copy: Record<string, unknown> | undefined;
    for (const key in value) {
      const item = (value as Record<string, unknown>)[key];
      if (typeof item !== "object" || item === null) continue;
      const next = withReplacedImages(item, replacements);
      if (next !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = next;
    }
    return copy ?? value;
  }
  return value;
}

async function rewriteImages<T>(value: T, rewrite: (data: string) => Promise<string | null>, wanted: (data: string) => boolean): Promise<T> {
  const blocks: ImageBlock[] = [];
  forEachContentImage(value, (block) => {
    if (wanted(block.data)) blocks.push(block);
  });
  if (blocks.length === 0) return value;
  const replacements = new Map<ImageBlock, string>();
  for (const block of blocks) {
    const data = await rewrite(block.data);
    if (data !== null && data !== block.data) replacements.set(block, data);
  }
  return replacements.size === 0 ? value : (withReplacedImages(value, replacements) as T);
}

const isInlineLarge = (data: string) => data.length >= EXTERNALIZE_MIN_BASE64 && !data.startsWith(BLOB_REF_PREFIX);
const isRef = (data: string) => data.startsWith(BLOB_REF_PREFIX);

/** Whether `value` holds an inline image big enough to move out: whether externalizeImages may change it. */
export function hasImagesToExternalize(value: unknown): boolean {
  return someImage(value, isInlineLarge);
}

/** Whether `value` holds a blob ref: whether resolveImages may change it. */
function hasBlobRefs(value: unknown): boolean {
  return someImage(value, isRef);
}

function someImage(value: unknown, test: (data: string) => boolean): boolean {
  let found = false;
  forEachContentImage(value, (block) => {
    found ||= test(block.data);
  });
  return found;
}

/** Whether `imagesInForm(value, form, …)` may change `value`: a synchronous scan, as nearly no record holds an image. */
export function hasImagesToConvert(value: unknown, form: ImageForm): boolean {
  return form === "inline" ? hasBlobRefs(value) : hasImagesToExternalize(value);
}

/**
 * `value` with its images in `form`: refs resolved to base64 from `blobs` ("inline"; a missing blob
 * keeps its ref and is reported), or large inline images moved into `blobs` ("blob-refs").
 */
export function imagesInForm<T>(value: T, form: ImageForm, blobs: BlobReader & BlobWriter, onMissing: (ref: string) => void): Promise<T> {
  return form === "inline" ? resolveImages(value, blobs, onMissing) : externalizeImages(value, blobs);
}

/** Moves large inline images of `value` into `blobs`; returns a copy where something moved. */
function externalizeImages<T>(value: T, blobs: BlobWriter): Promise<T> {
  return rewriteImages(
    value,
    async (data) => {
      const bytes = base64ToBytes(data);
      // Only canonical base64 moves out: resolving gives canonical base64 back, so anything else
      // (url-safe, unpadded, wrapped) would change on the round trip. Kept inline as written.
      return bytes && bytesToBase64(bytes) === data ? blobs.put(bytes) : null;
    },
    isInlineLarge,
  );
}

/** Replaces blob refs of `value` with base64; a missing blob keeps its ref and is reported. */
export function resolveImages<T>(value: T, blobs: BlobReader, onMissing: (ref: string) => void): Promise<T> {
  return rewriteImages(
    value,
    async (data) => {
      // A malformed ref names no blob; a storage failure is not a missing blob, so it propagates.
      const bytes = parseBlobRef(data) === null ? null : await blobs.get(data);
      if (!bytes) {
        onMissing(data);
        return null;
      }
      return bytesToBase64(bytes);
    },
    isRef,
  );
}

/** Every blob ref in `value`'s content arrays. */
export function collectBlobRefs(value: unknown, into: Set<string> = new Set()): Set<string> {
  forEachContentImage(value, (block) => {
    if (isRef(block.data)) into.add(block.data);
  });
  return into;
}
