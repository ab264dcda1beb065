#!/usr/bin/env python3
"""Reference keystreams for propdp's simulation RNG streams, from an
independent ChaCha20 (the `cryptography` package, OpenSSL) and an
independent SplitMix64: key = four SplitMix64 outputs from the seed, stream
id = SplitMix64 hash of the key path (crates/propdp-sim/src/rng.rs). ChaCha20
with a 64-bit block counter and a 64-bit stream id is OpenSSL's ChaCha20
with the 16-byte IV (counter, stream), little-endian.

    pip install cryptography
    python scripts/chacha20_reference.py > crates/propdp-sim/tests/data/chacha20_streams.csv
"""
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

M = (1 << 64) - 1


def mix(z):
    z = (z + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def keystream(seed, keys, nbytes=64):
    key, h = b"", seed
    for _ in range(4):
        h = mix(h)
        key += h.to_bytes(8, "little")
    stream = mix(len(keys))
    for k in keys:
        stream = mix(stream ^ k)
    iv = (0).to_bytes(8, "little") + stream.to_bytes(8, "little")
    enc = Cipher(algorithms.ChaCha20(key, iv), mode=None).encryptor()
    return enc.update(bytes(nbytes)).hex()


def main():
    print("seed,keys,keystream_hex")
    cases = [(0, []), (1, [0]), (7, [3, 400, 0]), (7, [3, 400, 1]), (2**64 - 1, [2**63, 5]), (123456789, [0, 0, 0])]
    for seed, keys in cases:
        print(f"{seed},{' '.join(map(str, keys))},{keystream(seed, keys)}")


if __name__ == "__main__":
    main()
