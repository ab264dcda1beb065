#!/usr/bin/env python3
"""Reference keystreams for propdp's simulation RNG streams (ChaCha8): an
independent, plain-Python ChaCha block function (D. J. Bernstein's ChaCha,
RFC 8439's quarter round and state layout, any even number of rounds) and an
independent SplitMix64: key = four SplitMix64 outputs from the seed, stream
id = SplitMix64 hash of the key path (crates/propdp-sim/src/rng.rs); state
words 12–13 the 64-bit block counter from 0, words 14–15 the stream id.

The block function is checked first, at 20 rounds, against RFC 8439's block
test vector (§2.3.2) and — when the `cryptography` package is installed —
against OpenSSL's ChaCha20 on the streams below; 8 rounds is the same code.

    pip install cryptography   # optional: the OpenSSL cross-check
    python scripts/reference/chacha_reference.py > crates/propdp-sim/tests/data/chacha8_streams.csv
"""
import struct
import sys

M = (1 << 64) - 1
M32 = (1 << 32) - 1
BLOCKS = 5  # 320 bytes: beyond a 4-block SIMD batch, so the counter's carry into the next batch is checked


def mix(z):
    z = (z + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def rotl(v, c):
    return ((v << c) & M32) | (v >> (32 - c))


def quarter(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & M32
    s[d] = rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & M32
    s[b] = rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & M32
    s[d] = rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & M32
    s[b] = rotl(s[b] ^ s[c], 7)


def block(key, words12_15, rounds):
    """One 64-byte keystream block for a 32-byte key and state words 12..15."""
    state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574] + list(struct.unpack("<8I", key)) + list(words12_15)
    s = state[:]
    for _ in range(rounds // 2):
        quarter(s, 0, 4, 8, 12)
        quarter(s, 1, 5, 9, 13)
        quarter(s, 2, 6, 10, 14)
        quarter(s, 3, 7, 11, 15)
        quarter(s, 0, 5, 10, 15)
        quarter(s, 1, 6, 11, 12)
        quarter(s, 2, 7, 8, 13)
        quarter(s, 3, 4, 9, 14)
    return struct.pack("<16I", *[(x + y) & M32 for x, y in zip(s, state)])


def key_and_stream(seed, keys):
    key, h = b"", seed
    for _ in range(4):
        h = mix(h)
        key += h.to_bytes(8, "little")
    stream = mix(len(keys))
    for k in keys:
        stream = mix(stream ^ k)
    return key, stream


def keystream(seed, keys, rounds, blocks=BLOCKS):
    key, stream = key_and_stream(seed, keys)
    return b"".join(block(key, (c & M32, c >> 32, stream & M32, stream >> 32), rounds) for c in range(blocks))


def check_block_function(cases):
    # RFC 8439 §2.3.2: key 00 01 … 1f, counter 1, nonce 00:00:00:09 00:00:00:4a 00:00:00:00
    key = bytes(range(32))
    words = (1, 0x09000000, 0x4A000000, 0)
    expected = ("10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
                "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
    assert block(key, words, 20).hex() == expected, "ChaCha20 block differs from RFC 8439 §2.3.2"
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
    except ImportError:
        print("cryptography not installed: checked against RFC 8439's vector only", file=sys.stderr)
        return
    for seed, keys in cases:
        key, stream = key_and_stream(seed, keys)
        iv = (0).to_bytes(8, "little") + stream.to_bytes(8, "little")
        openssl = Cipher(algorithms.ChaCha20(key, iv), mode=None).encryptor().update(bytes(64 * BLOCKS))
        assert keystream(seed, keys, 20) == openssl, f"ChaCha20 differs from OpenSSL at seed {seed}, keys {keys}"
    print("ChaCha20 blocks equal OpenSSL's on every case", file=sys.stderr)


def main():
    cases = [(0, []), (1, [0]), (7, [3, 400, 0]), (7, [3, 400, 1]), (2**64 - 1, [2**63, 5]), (123456789, [0, 0, 0])]
    check_block_function(cases)
    print("seed,keys,keystream_hex")
    for seed, keys in cases:
        print(f"{seed},{' '.join(map(str, keys))},{keystream(seed, keys, 8).hex()}")


if __name__ == "__main__":
    main()
