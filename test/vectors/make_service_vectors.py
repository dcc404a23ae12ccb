#!/usr/bin/env python3
"""Independent generator and cross-check for test/vectors/service.json.

Written from protocol/labels.md, protocol/objects.md sections 9-13 and RFC 9162 only, with
Python's hashlib and the `cryptography` package's Ed25519: it shares no code with shared/*.ts.
It builds every value of the pin from fixed inputs, checks its own proofs with a literal
transcription of the RFC 9162 verification algorithms, and writes the JSON.

    python3 test/vectors/make_service_vectors.py          # rewrite the pin
    python3 test/vectors/make_service_vectors.py --check  # exit 1 if the pin differs

The TypeScript tests (test/merkle.test.ts and friends) recompute everything with our code and
compare with the pin.
"""
import hashlib
import json
import os
import sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "service.json")


# --- notation (labels.md) -------------------------------------------------------------------

def H(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.digest()


def L(name):
    return ("agent-state:%s:v1" % name).encode("utf-8") + b"\x00"


def u64(n):
    return n.to_bytes(8, "big")


def uuid16(u):
    return bytes.fromhex(u.replace("-", ""))


def b64u(b):
    import base64
    return base64.urlsafe_b64encode(b).decode("ascii").rstrip("=")


def canonical(obj):
    # RFC 8785 for these objects: ASCII strings, the integer 1, true; sort_keys orders ASCII
    # member names exactly as UTF-16 code units would.
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for ch in text:
        assert ord(ch) < 0x80, "only ASCII is expected in these objects"
    return text.encode("utf-8")


def seed_key(seed):
    sk = Ed25519PrivateKey.from_private_bytes(seed)
    pk = sk.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return sk, pk


# --- RFC 9162 section 2.1, transcribed literally --------------------------------------------

def leaf_hash(data):
    return H(b"\x00", data)


def node(l, r):
    return H(b"\x01", l, r)


def largest_pow2_below(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(d):
    """MTH(D[n]) over already-hashed leaves."""
    n = len(d)
    assert n >= 1
    if n == 1:
        return d[0]
    k = largest_pow2_below(n)
    return node(mth(d[:k]), mth(d[k:]))


def path(m, d):
    """PATH(m, D[n]), section 2.1.3.1."""
    n = len(d)
    if n == 1:
        return []
    k = largest_pow2_below(n)
    if m < k:
        return path(m, d[:k]) + [mth(d[k:])]
    return path(m - k, d[k:]) + [mth(d[:k])]


def subproof(m, d, b):
    """SUBPROOF(m, D[n], b), section 2.1.4.1."""
    n = len(d)
    if m == n:
        return [] if b else [mth(d)]
    k = largest_pow2_below(n)
    if m <= k:
        return subproof(m, d[:k], b) + [mth(d[k:])]
    return subproof(m - k, d[k:], False) + [mth(d[:k])]


def consistency(m, d):
    return subproof(m, d, True)


def verify_inclusion(leaf, index, size, p, root):
    """Section 2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for x in p:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node(x, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node(r, x)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(first, second, first_hash, second_hash, p):
    """Section 2.1.4.2 (equal sizes: empty proof and equal roots)."""
    if first < 1 or first > second:
        return False
    if first == second:
        return len(p) == 0 and first_hash == second_hash
    if len(p) == 0:
        return False
    if first & (first - 1) == 0:
        p = [first_hash] + list(p)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = p[0]
    for c in p[1:]:
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


# --- fixed inputs -----------------------------------------------------------------------------

SPACE_ID = "0199bbbb-cccc-7ddd-8eee-ffffffffffff"
SERVICE_EPOCH = "0199cccc-dddd-7eee-8fff-000000000001"
ROOT_SEED = H(b"svc-vector root seed")
ONLINE_SEED = H(b"svc-vector online seed")
NOT_BEFORE = "2026-09-10T12:00:00.000Z"
NOT_AFTER = "2027-09-10T12:00:00.000Z"


def object_id(seq):
    return H(("svc-vector object %d" % seq).encode())


def post_chain(seq):
    return H(("svc-vector chain %d" % seq).encode())


def command_id(rev):
    return H(("svc-vector command %d" % rev).encode())


def control_chain(rev):
    return H(("svc-vector control-chain %d" % rev).encode())


def post_leaf(seq):
    return leaf_hash(L("checkpoint-object") + uuid16(SPACE_ID) + u64(seq) + object_id(seq) + post_chain(seq))


def event_leaf(rev):
    return leaf_hash(L("checkpoint-control") + uuid16(SPACE_ID) + u64(rev) + command_id(rev) + control_chain(rev))


def hx(b):
    return b.hex()


# --- build --------------------------------------------------------------------------------------

def build():
    root_sk, root_pk = seed_key(ROOT_SEED)
    online_sk, online_pk = seed_key(ONLINE_SEED)
    leaves = [post_leaf(s) for s in range(1, 1025)]
    events = [event_leaf(r) for r in range(1, 4)]

    # Merkle roots over post leaves 1..n.
    sizes = list(range(1, 18)) + [1024]
    roots = [{"size": n, "root": hx(mth(leaves[:n]))} for n in sizes]

    inclusion_cases = [(1, 0), (2, 0), (2, 1), (3, 2), (5, 4), (7, 3), (8, 5), (16, 0),
                       (17, 16), (17, 8), (1024, 0), (1024, 777), (1024, 1023)]
    inclusion = []
    for size, index in inclusion_cases:
        p = path(index, leaves[:size])
        root = mth(leaves[:size])
        assert verify_inclusion(leaves[index], index, size, p, root)
        inclusion.append({"tree_size": size, "leaf_index": index, "leaf": hx(leaves[index]),
                          "root": hx(root), "path": [hx(x) for x in p]})
    assert len(inclusion[-1]["path"]) == 10

    consistency_cases = [(1, 1), (1, 2), (2, 3), (3, 7), (4, 8), (6, 17), (7, 16), (16, 17),
                         (1, 1024), (1000, 1024), (1023, 1024)]
    cons = []
    for m, n in consistency_cases:
        p = consistency(m, leaves[:n])
        r1, r2 = mth(leaves[:m]), mth(leaves[:n])
        assert verify_consistency(m, n, r1, r2, p)
        cons.append({"first": m, "second": n, "first_root": hx(r1), "second_root": hx(r2),
                     "proof": [hx(x) for x in p]})

    # Invalid proofs, each naming the rule it breaks; the literal verifier must refuse them.
    def flip(b, i=0):
        b = bytearray(b)
        b[i] ^= 0x01
        return bytes(b)

    # Base cases are chosen so that index and size one off each give a tree of another shape:
    # RFC 9162 proofs are ambiguous between (index, size) pairs whose paths have the same shape
    # (for example leaf 8 of 17 or 18 leaves), which is why both come from the signed range.
    ileaf, iroot = leaves[26], mth(leaves[:28])
    ipath = path(26, leaves[:28])
    assert verify_inclusion(ileaf, 26, 28, ipath, iroot)
    inclusion_invalid = [
        ("leaf_index one too high", ileaf, 27, 28, ipath, iroot),
        ("leaf_index one too low", ileaf, 25, 28, ipath, iroot),
        ("tree_size one too high", ileaf, 26, 29, ipath, iroot),
        ("tree_size one too low", ileaf, 26, 27, ipath, iroot),
        ("leaf_index equals tree_size", ileaf, 28, 28, ipath, iroot),
        ("first path hash has one flipped bit", ileaf, 26, 28, [flip(ipath[0])] + ipath[1:], iroot),
        ("last path hash has one flipped bit", ileaf, 26, 28, ipath[:-1] + [flip(ipath[-1], 31)], iroot),
        ("leaf has one flipped bit", flip(ileaf, 5), 26, 28, ipath, iroot),
        ("root has one flipped bit", ileaf, 26, 28, ipath, flip(iroot, 17)),
        ("path one hash short", ileaf, 26, 28, ipath[:-1], iroot),
        ("path one hash long", ileaf, 26, 28, ipath + [ipath[0]], iroot),
        ("path hashes in the wrong order", ileaf, 26, 28, list(reversed(ipath)), iroot),
    ]
    inv_inc = []
    for rule, lf, idx, size, p, root in inclusion_invalid:
        assert not verify_inclusion(lf, idx, size, p, root), rule
        inv_inc.append({"rule": rule, "tree_size": size, "leaf_index": idx, "leaf": hx(lf),
                        "root": hx(root), "path": [hx(x) for x in p]})

    c1, c2 = mth(leaves[:27]), mth(leaves[:28])
    cp = consistency(27, leaves[:28])
    assert verify_consistency(27, 28, c1, c2, cp)
    consistency_invalid = [
        ("first one too high", 28, 28, c1, c2, cp),
        ("first one too low", 26, 28, c1, c2, cp),
        ("second one too high", 27, 29, c1, c2, cp),
        ("second one too low", 27, 27, c1, c2, cp),
        ("first proof hash has one flipped bit", 27, 28, c1, c2, [flip(cp[0])] + cp[1:]),
        ("last proof hash has one flipped bit", 27, 28, c1, c2, cp[:-1] + [flip(cp[-1], 31)]),
        ("first root has one flipped bit", 27, 28, flip(c1, 3), c2, cp),
        ("second root has one flipped bit", 27, 28, c1, flip(c2, 3), cp),
        ("roots swapped", 27, 28, c2, c1, cp),
        ("proof one hash short", 27, 28, c1, c2, cp[:-1]),
        ("proof one hash long", 27, 28, c1, c2, cp + [cp[0]]),
        ("empty proof between different sizes", 27, 28, c1, c2, []),
        ("first above second", 28, 27, c2, c1, cp),
        ("equal sizes with a non-empty proof", 28, 28, c2, c2, [c1]),
        ("equal sizes with different roots", 27, 27, c1, c2, []),
    ]
    inv_cons = []
    for rule, m, n, r1, r2, p in consistency_invalid:
        assert not verify_consistency(m, n, r1, r2, p), rule
        inv_cons.append({"rule": rule, "first": m, "second": n, "first_root": hx(r1),
                         "second_root": hx(r2), "proof": [hx(x) for x in p]})

    # Service keys and certificates (objects.md section 9).
    key_id = H(L("service-key"), online_pk)

    def certificate(development, not_after):
        cert = {"key": hx(online_pk), "not_before": NOT_BEFORE,
                "purposes": ["checkpoint", "receipt", "recovery"], "root": hx(root_pk), "v": 1}
        if development:
            cert["development"] = True
        if not_after is not None:
            cert["not_after"] = not_after
        cb = canonical(cert)
        cid = H(L("service-certificate"), cb)
        sig = root_sk.sign(L("service-certificate-signature") + cid)
        return {"development": development, "not_after": not_after, "canonical_utf8": cb.decode(),
                "certificate_id": hx(cid), "signature": hx(sig)}

    cert = certificate(False, NOT_AFTER)
    dev_cert = certificate(True, None)
    signer = {"key_id": hx(key_id), "public_key": hx(online_pk), "root_key": hx(root_pk),
              "certificate": b64u(cert["canonical_utf8"].encode()),
              "certificate_signature": cert["signature"], "development": False}

    # Receipts (objects.md section 10).
    def receipt(seq, post_id, posted_at, epoch):
        fields = {"chain_hash": hx(post_chain(seq)), "object_id": hx(object_id(seq)),
                  "post_id": post_id, "posted_at": posted_at, "seq": str(seq),
                  "service_epoch": epoch, "signer_key_id": hx(key_id), "space_id": SPACE_ID, "v": 1}
        cb = canonical(fields)
        rid = H(L("receipt"), cb)
        sig = online_sk.sign(L("receipt-signature") + rid)
        return {"fields": fields, "canonical_utf8": cb.decode(), "receipt_id": hx(rid),
                "signature": hx(sig),
                "short": {"v": 1, "service_epoch": epoch, "signer_key_id": hx(key_id), "signature": hx(sig)},
                "full": {"canonical": b64u(cb), "signature": hx(sig), "signer_key_id": hx(key_id)}}

    receipts = [
        receipt(7, "0199dddd-eeee-7fff-8000-000000000007", "2026-09-10T12:34:56.789Z", SERVICE_EPOCH),
        # posted_at is opaque: the reference's database rendering is copied as given.
        receipt(8, "0199dddd-eeee-7fff-8000-000000000008", "2026-09-10T12:34:57.123456+00:00", None),
    ]

    # Checkpoints (objects.md section 11).
    def checkpoint(stream, first, last, leaf_list, pred, ending, previous, created_at):
        members = {"created_at": created_at, "ending_hash": hx(ending), "first": str(first),
                   "last": str(last), "merkle_root": hx(mth(leaf_list)), "predecessor_hash": hx(pred),
                   "service_epoch": SERVICE_EPOCH, "signer_key_id": hx(key_id), "space_id": SPACE_ID,
                   "stream": stream, "v": 1}
        if previous is not None:
            members["previous_checkpoint_id"] = previous
        cb = canonical(members)
        cid = H(L("checkpoint"), cb)
        sig = online_sk.sign(L("checkpoint-signature") + cid)
        served = {"checkpoint_id": hx(cid), "stream": stream, "first": str(first), "last": str(last),
                  "previous_checkpoint_id": previous, "predecessor_hash": hx(pred),
                  "ending_hash": hx(ending), "merkle_root": members["merkle_root"],
                  "service_epoch": SERVICE_EPOCH, "created_at": created_at, "canonical": b64u(cb),
                  "signature": hx(sig), "signer": signer}
        return {"canonical_utf8": cb.decode(), "checkpoint_id": hx(cid), "signature": hx(sig),
                "served": served}

    posts_genesis = H(L("object-genesis"), uuid16(SPACE_ID))
    control_genesis = H(L("control-genesis"), uuid16(SPACE_ID))
    cp1 = checkpoint("posts", 1, 5, leaves[0:5], posts_genesis, post_chain(5), None,
                     "2026-09-10T12:10:00.000Z")
    cp2 = checkpoint("posts", 6, 17, leaves[5:17], post_chain(5), post_chain(17),
                     cp1["checkpoint_id"], "2026-09-10T12:20:00.000Z")
    ev1 = checkpoint("events", 1, 3, events, control_genesis, control_chain(3), None,
                     "2026-09-10T12:10:00.000Z")

    # An inclusion proof of post 9 against the second checkpoint (objects.md section 13, step 6).
    proof_index = 9 - 6
    proof_path = path(proof_index, leaves[5:17])
    assert verify_inclusion(leaves[8], proof_index, 12, proof_path, mth(leaves[5:17]))

    return {
        "about": (
            "Our own pin for formats no published vector covers: RFC 9162 Merkle roots and proofs "
            "over checkpoint-object leaves, the service certificate, a receipt and chained "
            "checkpoints (protocol/objects.md sections 9-13). Computed by "
            "test/vectors/make_service_vectors.py, an independent Python implementation (hashlib, "
            "cryptography Ed25519, RFC 9162 algorithms transcribed literally) that shares no code "
            "with shared/*.ts; checked against our code by test/merkle.test.ts, "
            "test/service-keys.test.ts, test/receipt.test.ts and test/checkpoint.test.ts. "
            "Regenerate with: python3 test/vectors/make_service_vectors.py"
        ),
        "test_only": True,
        "inputs": {
            "space_id": SPACE_ID,
            "service_epoch": SERVICE_EPOCH,
            "root_seed": hx(ROOT_SEED),
            "online_seed": hx(ONLINE_SEED),
            "not_before": NOT_BEFORE,
            "not_after": NOT_AFTER,
            "object_id": "SHA-256 of the ASCII text 'svc-vector object <seq>'",
            "chain_hash": "SHA-256 of the ASCII text 'svc-vector chain <seq>'",
            "command_id": "SHA-256 of the ASCII text 'svc-vector command <revision>'",
            "control_chain_hash": "SHA-256 of the ASCII text 'svc-vector control-chain <revision>'",
            "leaves": "post leaf of seq s is leaf index s-1; a tree of size n holds seq 1..n",
        },
        "root_public_key": hx(root_pk),
        "online_public_key": hx(online_pk),
        "key_id": hx(key_id),
        "post_leaves": [hx(x) for x in leaves[:3]],
        "event_leaves": [hx(x) for x in events],
        "posts_genesis": hx(posts_genesis),
        "control_genesis": hx(control_genesis),
        "roots": roots,
        "inclusion": {"valid": inclusion, "invalid": inv_inc},
        "consistency": {"valid": cons, "invalid": inv_cons},
        "certificate": cert,
        "development_certificate": dev_cert,
        "signer": signer,
        "receipts": receipts,
        "checkpoints": {"posts_1": cp1, "posts_2": cp2, "events_1": ev1},
        "post_proof": {"seq": "9", "leaf": hx(leaves[8]), "checkpoint": "posts_2",
                       "inclusion": {"leaf_index": proof_index, "tree_size": 12,
                                     "path": [hx(x) for x in proof_path]}},
    }


def main():
    text = json.dumps(build(), indent=2) + "\n"
    if "--check" in sys.argv:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print("service.json differs from what the generator computes", file=sys.stderr)
                sys.exit(1)
        print("service.json matches")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
