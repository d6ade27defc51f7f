/**
 * The store's form for an import: what a session ready to be placed is (Candidate), where its blobs
 * come from (BlobSource), and StoreForm, which converts each incoming session to the images and
 * dialect of the store's owner.
 */
import { BlobStore, parseBlobRef, sha256Hex } from "../blobs/blob-store.js";
import { collectBlobRefs, hasImagesToConvert, hasImagesToExternalize, imagesInForm, type BlobReader, type BlobWriter, type ImageForm } from "../blobs/images.js";
import type { SessionDialect } from "../format/dialect.js";
import type { SessionEntry, SessionHeader } from "../format/types.js";
import type { StoragePort } from "../port.js";
import type { StoreLayout } from "../session/paths.js";
import { defaultStoreOwner, ownerLayout, storeDialect, storeImageForm, type StoreOwner } from "../session/store-owner.js";
import { bytesPort } from "./bytes-port.js";
import { ArchiveError } from "./errors.js";
import type { ImportOptions } from "./import-options.js";
import { encodeSession } from "./session-bytes.js";

/** A session ready to be placed: validated, its entry ids known, its bytes available again. */
export interface Candidate {
  source: string;
  dialect: SessionDialect;
  header: SessionHeader;
  entryIds: string[];
  sha256: string;
  blobRefs: string[];
  /** An entry holds an inline image a blob store would move out. */
  inlineImages: boolean;
  bytes(): Promise<Uint8Array>;
  entries(): Promise<SessionEntry[]>;
}

export interface BlobSource {
  hash: string;
  size: number;
  /** Bytes that hash to `hash`: checked when verified, and again when read back from an archive. */
  read(): Promise<Uint8Array>;
}

export function blobRefsOf(entries: readonly SessionEntry[]): string[] {
  const refs = new Set<string>();
  for (const entry of entries) collectBlobRefs(entry, refs);
  return hashesOf(refs);
}

function hashesOf(refs: Iterable<string>): string[] {
  const out: string[] = [];
  for (const ref of refs) {
    const hash = parseBlobRef(ref);
    if (hash) out.push(hash);
  }
  return out;
}

/**
 * The form the store imported into keeps (its owner's: session/store-owner.ts), and each incoming
 * session converted to it on the way in. Blob refs resolve from the import's blobs, then the
 * source store's (`sourceBlobs`), then the store's own; images moved out are staged here and
 * written to the store before the sessions.
 */
export class StoreForm {
  readonly owner: StoreOwner;
  readonly layout: StoreLayout;
  readonly images: ImageForm;
  readonly #staged = bytesPort();
  readonly #blobs: BlobReader & BlobWriter;
  readonly #source: BlobStore | null;

  constructor(storage: StoragePort, imported: readonly BlobSource[], options: ImportOptions) {
    this.layout = options.layout ?? (options.owner && ownerLayout(options.owner)) ?? "pi";
    this.owner = options.owner ?? defaultStoreOwner(storage, this.layout);
    this.images = storeImageForm(this.owner);
    const byHash = new Map(imported.map((blob) => [blob.hash, blob]));
    const staged = new BlobStore(this.#staged);
    const source = (this.#source = options.sourceBlobs ? new BlobStore(options.sourceBlobs) : null);
    const stored = new BlobStore(storage);
    this.#blobs = {
      get: async (ref) => {
        const blob = byHash.get(parseBlobRef(ref) ?? "");
        if (blob) return blob.read();
        return (await staged.get(ref)) ?? (await source?.get(ref)) ?? (await stored.get(ref));
      },
      put: (bytes) => staged.put(bytes),
    };
  }

  /** `entries` with their images in the store's form (a ref that resolves nowhere stays: see placeSessions). */
  async entries(entries: readonly SessionEntry[]): Promise<SessionEntry[]> {
    const out: SessionEntry[] = [];
    for (const entry of entries) out.push(hasImagesToConvert(entry, this.images) ? await imagesInForm(entry, this.images, this.#blobs, () => {}) : entry);
    return out;
  }

  /**
   * The candidate as the store will hold it. A converted session is converted again when its bytes
   * are written (the same bytes: conversion is deterministic), so memory holds one at a time.
   */
  async candidate(candidate: Candidate): Promise<Candidate> {
    const dialect = storeDialect(this.owner, this.layout, candidate.dialect);
    const images = this.images === "inline" ? candidate.blobRefs.length > 0 : candidate.inlineImages;
    if (dialect === candidate.dialect && !images) return candidate;
    const convert = async () => {
      const entries = await this.entries(await candidate.entries());
      return { entries, bytes: encodeSession(dialect, candidate.header, entries) };
    };
    const { entries, bytes } = await convert();
    return {
      ...candidate,
      dialect,
      sha256: await sha256Hex(bytes),
      blobRefs: blobRefsOf(entries),
      inlineImages: entries.some(hasImagesToExternalize),
      bytes: async () => (await convert()).bytes,
      entries: async () => (await convert()).entries,
    };
  }

  /** The blobs images were moved into on the way in. */
  staged(): BlobSource[] {
    return [...this.#staged.files].map(([path, bytes]) => ({ hash: path.slice(path.lastIndexOf("/") + 1), size: bytes.length, read: async () => bytes }));
  }

  /** A blob of the source store (checked against its name when read), or null. */
  async sourceBlob(hash: string): Promise<BlobSource | null> {
    const source = this.#source;
    const stat = source && (await source.storage.stat(source.pathOf(hash)));
    if (!source || !stat) return null;
    const path = source.pathOf(hash);
    return {
      hash,
      size: stat.size,
      read: async () => {
        const bytes = await source.storage.read(path);
        const actual = bytes && (await sha256Hex(bytes));
        if (!bytes || actual !== hash) throw new ArchiveError("blob-hash", `the source store's blob ${bytes ? `hashes to ${actual}` : "vanished"}`, { member: path });
        return bytes;
      },
    };
  }
}
