#!/usr/bin/env python3
"""An independent check of the relay's transparency-log evidence, written from the public texts
only (C2SP signed-note, tlog-checkpoint and tlog-cosignature; RFC 9162 sections 2.1.1, 2.1.3.2
and 2.1.4.2; protocol/objects.md section 12 for the leaf), with Python's standard library and
the `cryptography` package for Ed25519. It shares no code with the TypeScript it checks.

Reads one JSON object on stdin:
  note        the signed note text
  origin_key  {name, public_key_b64}: the relay's note key
  witnesses   [{name, public_key_b64}]: cosigners whose lines to check
  posts       optional {space_id, items: [{seq, object_id, chain_hash}]}: recompute the root
  consistency optional [{from, to, old_root_b64, new_root_b64, proof: [hex]}]
  inclusion   optional [{index, size, leaf_hex, root_b64, proof: [hex]}]
Writes one JSON object on stdout with what it found (see `main`).
"""
import base64
import hashlib
import json
import struct
import sys
import uuid

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

DASH = "\u2014 "


def sha256(b):
    return hashlib.sha256(b).digest()


def key_id(name, kind, public_key):
    return sha256(name.encode() + b"\n" + bytes([kind]) + public_key)[:4]


def ed25519_ok(public_key, message, signature):
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
        return True
    except (InvalidSignature, ValueError):
        return False


def parse_note(note):
    assert note.endswith("\n"), "a note ends in a newline"
    text, _, sigs = note.rpartition("\n\n")
    text += "\n"
    lines = []
    for line in sigs[:-1].split("\n"):
        assert line.startswith(DASH), "a signature line starts with an em dash and a space"
        name, b64 = line[len(DASH):].split(" ")
        raw = base64.b64decode(b64, validate=True)
        lines.append((name, raw[:4], raw[4:]))
    return text, lines


def mth(leaves):
    n = len(leaves)
    if n == 0:
        return sha256(b"")
    if n == 1:
        return leaves[0]
    k = 1
    while k * 2 < n:
        k *= 2
    return sha256(b"\x01" + mth(leaves[:k]) + mth(leaves[k:]))


def post_leaf(space_id, seq, object_id, chain_hash):
    label = b"agent-state:checkpoint-object:v1\x00"
    return sha256(b"\x00" + label + uuid.UUID(space_id).bytes + struct.pack(">Q", seq) + object_id + chain_hash)


def node(a, b):
    return sha256(b"\x01" + a + b)


def verify_consistency(first, second, first_hash, second_hash, proof):
    """RFC 9162 section 2.1.4.2, step by step."""
    if first == second:
        return len(proof) == 0 and first_hash == second_hash
    if first < 1 or first > second or len(proof) == 0:
        return False
    if first & (first - 1) == 0:
        proof = [first_hash] + proof
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node(c, fr)
            sr = node(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == first_hash and sr == second_hash


def verify_inclusion(index, size, leaf, root, proof):
    """RFC 9162 section 2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def main():
    req = json.load(sys.stdin)
    text, sigs = parse_note(req["note"])
    body = text.split("\n")
    origin, size, root = body[0], int(body[1]), base64.b64decode(body[2], validate=True)
    out = {"origin": origin, "size": size, "root_b64": base64.b64encode(root).decode(), "signature_lines": len(sigs)}

    okey = req["origin_key"]
    opk = base64.b64decode(okey["public_key_b64"])
    oid = key_id(okey["name"], 0x01, opk)
    out["origin_key_id"] = oid.hex()
    mine = [s for s in sigs if s[0] == okey["name"] and s[1] == oid]
    out["origin_signature"] = len(mine) > 0 and all(ed25519_ok(opk, text.encode(), s[2]) for s in mine)

    cos = {}
    for w in req.get("witnesses", []):
        wpk = base64.b64decode(w["public_key_b64"])
        wid = key_id(w["name"], 0x04, wpk)
        found = None
        for name, kid, sig in sigs:
            if name != w["name"] or kid != wid:
                continue
            (t,) = struct.unpack(">Q", sig[:8])
            msg = ("cosignature/v1\ntime %d\n" % t).encode() + text.encode()
            found = t if ed25519_ok(wpk, msg, sig[8:]) else "invalid"
        cos[w["name"]] = found
    out["cosignatures"] = cos

    if "posts" in req:
        p = req["posts"]
        items = sorted(p["items"], key=lambda i: int(i["seq"]))
        leaves = [post_leaf(p["space_id"], int(i["seq"]), bytes.fromhex(i["object_id"]), bytes.fromhex(i["chain_hash"])) for i in items[:size]]
        out["leaves_hex"] = [l.hex() for l in leaves]
        out["root_matches_posts"] = len(leaves) == size and mth(leaves) == root

    out["consistency"] = [
        verify_consistency(int(c["from"]), int(c["to"]), base64.b64decode(c["old_root_b64"]), base64.b64decode(c["new_root_b64"]), [bytes.fromhex(h) for h in c["proof"]])
        for c in req.get("consistency", [])
    ]
    out["inclusion"] = [
        verify_inclusion(int(c["index"]), int(c["size"]), bytes.fromhex(c["leaf_hex"]), base64.b64decode(c["root_b64"]), [bytes.fromhex(h) for h in c["proof"]])
        for c in req.get("inclusion", [])
    ]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
