import { describe, expect, it } from "vitest";
import { ReusedEncodeBuffer } from "../../src/format/bytes.js";

const utf8 = (text: string) => new TextEncoder().encode(text);

describe("ReusedEncodeBuffer", () => {
  it("encodes each text as TextEncoder does, in one buffer up to its limit and in buffers of their own beyond", () => {
    const reused = new ReusedEncodeBuffer(100);
    // Three-byte and four-byte (surrogate pair) characters: the buffer's 3 bytes per UTF-16 unit must hold them.
    const texts = ["ascii line\n", "€".repeat(100), "😀".repeat(50), "a€😀\n".repeat(20), "x".repeat(101), "", "short"];
    const results = texts.map((text) => {
      const bytes = reused.encode(text);
      expect(bytes).toEqual(utf8(text));
      return bytes;
    });
    // Up to 100 characters the results share one buffer (each valid until the next call); beyond, not.
    const [first, second, third, fourth, beyond, empty] = results;
    expect(second!.buffer).toBe(first!.buffer);
    expect(third!.buffer).toBe(first!.buffer);
    expect(fourth!.buffer).toBe(first!.buffer);
    expect(empty!.buffer).toBe(first!.buffer);
    expect(beyond!.buffer).not.toBe(first!.buffer);
    expect(new TextDecoder().decode(beyond)).toBe("x".repeat(101));
  });

  it("grows its buffer for a longer text within its limit", () => {
    const reused = new ReusedEncodeBuffer(10_000);
    const small = reused.encode("small");
    const large = reused.encode("€".repeat(5_000));
    expect(large).toEqual(utf8("€".repeat(5_000)));
    expect(large.buffer).not.toBe(small.buffer);
    expect(reused.encode("small again").buffer).toBe(large.buffer);
  });
});
