#!/usr/bin/env python3
"""Writes the fuzz corpus's seeds: every payload of compat/fixtures, bare and
compressed as Redisson wrote them, under each decoder the target can pick
(the first byte: wrapper in the high nibble, decoder in the low one)."""
import json, os, pathlib, hashlib

root = pathlib.Path(__file__).resolve().parents[2] / "compat" / "fixtures"
out = pathlib.Path(__file__).resolve().parent / "corpus" / "decode"
out.mkdir(parents=True, exist_ok=True)
payloads = []
codecs = json.loads((root / "codecs.json").read_text())
for name, codec in codecs["codecs"].items():
    wrap = {"lz4": 1, "lz4v2": 2, "snappy": 3, "zstd": 4}.get(name.split("/")[0], 0)
    for case in codec.get("cases", {}).values():
        if isinstance(case, dict) and case.get("hex"):
            payloads.append((wrap, bytes.fromhex(case["hex"])))
for case in json.loads((root / "kryo5.json").read_text())["cases"]:
    payloads.append((0, bytes.fromhex(case["kryo_hex"])))
for name in ["serialization-extra.json", "marshalling_repeats.json"]:
    for case in json.loads((root / name).read_text())["cases"]:
        for key, value in (case.items() if isinstance(case, dict) else []):
            if key.endswith("hex") and isinstance(value, str):
                payloads.append((0, bytes.fromhex(value)))
n = 0
for wrap, raw in payloads:
    for decoder in range(8):
        seed = bytes([wrap << 4 | decoder]) + raw
        (out / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
        n += 1
print(f"{n} seeds in {out}")
