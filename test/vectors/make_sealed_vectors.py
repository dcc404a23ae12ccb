#!/usr/bin/env python3
"""Independent generator and cross-check for test/vectors/sealed.json.

Written from protocol/sealed.md, protocol/labels.md, protocol/objects.md section 7 and
RFC 9180 only, with Python's hashlib and hmac and the `cryptography` package (X25519, HKDFExpand,
AESGCM, Ed25519, and its own HPKE base mode as a check): it shares no code with shared/*.ts.
It builds every sealed layout from fixed inputs, opens what it sealed, checks its HPKE against
RFC 9180 A.1 (test/vectors/published/hpke-rfc9180-a1.json) and against `cryptography`'s HPKE, and
writes the JSON.

    python3 test/vectors/make_sealed_vectors.py          # rewrite the pin
    python3 test/vectors/make_sealed_vectors.py --check  # exit 1 if the pin differs

test/sealed-vectors.test.ts recomputes every value with our TypeScript and compares with the pin.
"""
import base64
import hashlib
import hmac
import json
import os
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
from cryptography.hazmat.primitives.serialization import Encoding, PrivateFormat, PublicFormat, NoEncryption

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "sealed.json")
PUBLISHED = os.path.join(HERE, "published")


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
    return base64.urlsafe_b64encode(b).decode("ascii").rstrip("=")


def hkdf_extract(salt, ikm):
    # RFC 5869 2.2: an empty salt is HashLen zero bytes.
    return hmac.new(salt if salt else b"\x00" * 32, ikm, hashlib.sha256).digest()


def hkdf_expand(prk, info, n):
    return HKDFExpand(algorithm=hashes.SHA256(), length=n, info=info).derive(prk)


def HKDF(salt, ikm, info, n):
    return hkdf_expand(hkdf_extract(salt, ikm), info, n)


def AES(k, pt, aad):
    return AESGCM(k).encrypt(b"\x00" * 12, pt, aad)


def AES_open(k, ct, aad):
    return AESGCM(k).decrypt(b"\x00" * 12, ct, aad)


# RFC 8785 for the values used here: objects, arrays, strings, integers, booleans. Member names
# are ordered by their UTF-16 code units; strings are escaped as ECMAScript's JSON.stringify does.
def jcs(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, int):
        assert abs(v) < 2 ** 53
        return str(v)
    if isinstance(v, str):
        out = ['"']
        for ch in v:
            c = ord(ch)
            if ch == '"':
                out.append('\\"')
            elif ch == "\\":
                out.append("\\\\")
            elif ch == "\b":
                out.append("\\b")
            elif ch == "\f":
                out.append("\\f")
            elif ch == "\n":
                out.append("\\n")
            elif ch == "\r":
                out.append("\\r")
            elif ch == "\t":
                out.append("\\t")
            elif c < 0x20:
                out.append("\\u%04x" % c)
            else:
                out.append(ch)
        out.append('"')
        return "".join(out)
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v.keys(), key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(jcs(k) + ":" + jcs(v[k]) for k in keys) + "}"
    raise TypeError(type(v))


def canonical(v):
    return jcs(v).encode("utf-8")


# --- RFC 9180, suite DHKEM(X25519, HKDF-SHA256) / HKDF-SHA256 / AES-128-GCM -----------------

def i2osp(n, w):
    return n.to_bytes(w, "big")


KEM_SUITE = b"KEM" + i2osp(0x0020, 2)
HPKE_SUITE = b"HPKE" + i2osp(0x0020, 2) + i2osp(0x0001, 2) + i2osp(0x0001, 2)


def labeled_extract(suite, salt, label, ikm):
    return hkdf_extract(salt, b"HPKE-v1" + suite + label + ikm)


def labeled_expand(suite, prk, label, info, n):
    return hkdf_expand(prk, i2osp(n, 2) + b"HPKE-v1" + suite + label + info, n)


def x25519_pub(sk):
    return X25519PrivateKey.from_private_bytes(sk).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def dh(sk, pk):
    out = X25519PrivateKey.from_private_bytes(sk).exchange(X25519PublicKey.from_public_bytes(pk))
    if out == b"\x00" * 32:
        raise ValueError("all-zero X25519 result")
    return out


def derive_key_pair(ikm):
    prk = labeled_extract(KEM_SUITE, b"", b"dkp_prk", ikm)
    sk = labeled_expand(KEM_SUITE, prk, b"sk", b"", 32)
    return sk, x25519_pub(sk)


def extract_and_expand(dhv, kem_context):
    prk = labeled_extract(KEM_SUITE, b"", b"eae_prk", dhv)
    return labeled_expand(KEM_SUITE, prk, b"shared_secret", kem_context, 32)


def encap(pkR, ikmE):
    skE, pkE = derive_key_pair(ikmE)
    return extract_and_expand(dh(skE, pkR), pkE + pkR), pkE


def auth_encap(pkR, skS, ikmE):
    skE, pkE = derive_key_pair(ikmE)
    return extract_and_expand(dh(skE, pkR) + dh(skS, pkR), pkE + pkR + x25519_pub(skS)), pkE


def auth_decap(enc, skR, pkS):
    return extract_and_expand(dh(skR, enc) + dh(skR, pkS), enc + x25519_pub(skR) + pkS)


def key_schedule(mode, shared, info):
    psk_id_hash = labeled_extract(HPKE_SUITE, b"", b"psk_id_hash", b"")
    info_hash = labeled_extract(HPKE_SUITE, b"", b"info_hash", info)
    ctx = bytes([mode]) + psk_id_hash + info_hash
    secret = labeled_extract(HPKE_SUITE, shared, b"secret", b"")
    return {
        "key_schedule_context": ctx,
        "secret": secret,
        "key": labeled_expand(HPKE_SUITE, secret, b"key", ctx, 16),
        "base_nonce": labeled_expand(HPKE_SUITE, secret, b"base_nonce", ctx, 12),
        "exporter_secret": labeled_expand(HPKE_SUITE, secret, b"exp", ctx, 32),
    }


def nonce_at(base, seq):
    return bytes(a ^ b for a, b in zip(base, i2osp(seq, 12)))


def seal_auth(pkR, info, aad, pt, skS, ikmE):
    shared, enc = auth_encap(pkR, skS, ikmE)
    ks = key_schedule(2, shared, info)
    return enc, AESGCM(ks["key"]).encrypt(ks["base_nonce"], pt, aad)


def open_auth(enc, skR, info, aad, ct, pkS):
    ks = key_schedule(2, auth_decap(enc, skR, pkS), info)
    return AESGCM(ks["key"]).decrypt(ks["base_nonce"], ct, aad)


def self_check_hpke():
    """Our HPKE against RFC 9180 A.1 (both modes) and against cryptography's own base mode."""
    with open(os.path.join(PUBLISHED, "hpke-rfc9180-a1.json")) as f:
        vectors = json.load(f)["vectors"]
    for v in vectors:
        x = {k: bytes.fromhex(v[k]) for k in v if isinstance(v[k], str)}
        assert derive_key_pair(x["ikmE"]) == (x["skEm"], x["pkEm"])
        assert derive_key_pair(x["ikmR"]) == (x["skRm"], x["pkRm"])
        if v["mode"] == 2:
            assert derive_key_pair(x["ikmS"]) == (x["skSm"], x["pkSm"])
            shared, enc = auth_encap(x["pkRm"], x["skSm"], x["ikmE"])
            assert auth_decap(enc, x["skRm"], x["pkSm"]) == shared
        else:
            shared, enc = encap(x["pkRm"], x["ikmE"])
        assert (shared, enc) == (x["shared_secret"], x["enc"])
        ks = key_schedule(v["mode"], shared, x["info"])
        for k in ks:
            assert ks[k] == x[k], k
        for seq, e in enumerate(v["encryptions"]):
            n = nonce_at(ks["base_nonce"], seq)
            assert n.hex() == e["nonce"]
            ct = AESGCM(ks["key"]).encrypt(n, bytes.fromhex(e["pt"]), bytes.fromhex(e["aad"]))
            assert ct.hex() == e["ct"]
    try:
        from cryptography.hazmat.primitives import hpke
    except ImportError:
        return
    suite = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_128_GCM)
    skR, pkR = derive_key_pair(H(b"svc-vector hpke self-check recipient"))
    recipient = X25519PrivateKey.from_private_bytes(skR)
    # cryptography seals (enc || ct, empty aad), we open; we seal, cryptography opens.
    sealed = suite.encrypt(b"self-check", recipient.public_key(), info=b"info")
    enc, ct = sealed[:32], sealed[32:]
    ks = key_schedule(0, extract_and_expand(dh(skR, enc), enc + pkR), b"info")
    assert AESGCM(ks["key"]).decrypt(ks["base_nonce"], ct, b"") == b"self-check"
    shared, enc = encap(pkR, H(b"svc-vector hpke self-check ephemeral"))
    ks = key_schedule(0, shared, b"info")
    ours = enc + AESGCM(ks["key"]).encrypt(ks["base_nonce"], b"self-check", b"")
    assert suite.decrypt(ours, recipient, info=b"info") == b"self-check"


# --- fixed inputs ---------------------------------------------------------------------------

def tagged(text):
    return H(("svc-vector sealed " + text).encode("ascii"))


SPACE_ID = "0199dddd-eeee-7fff-8000-111111111111"
NAMES = ["owner", "keeper", "member", "stamper"]


def make_key(name):
    seed = tagged("seed " + name)
    sk = Ed25519PrivateKey.from_private_bytes(seed)
    pk = sk.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    peer = H(L("agent"), pk)
    # sealed.md section 2: S = the Ed25519 seed.
    ikm = HKDF(b"", seed, L("encryption-key-seed") + peer, 32)
    esk, epk = derive_key_pair(ikm)
    statement = canonical({"kem": 32, "peer_id": peer.hex(), "public_key": epk.hex(), "v": 1})
    assert len(statement) <= 512
    signed = L("encryption-key") + statement
    sig = sk.sign(signed)
    fp = H(L("encryption-key"), epk)[:16].hex()
    return {
        "_sk": sk,
        "_esk": esk,
        "seed": seed.hex(),
        "public_key": pk.hex(),
        "peer_id": peer.hex(),
        "encryption": {
            "ikm": ikm.hex(),
            "private_key": esk.hex(),
            "public_key": epk.hex(),
            "statement_utf8": statement.decode("utf-8"),
            "statement_b64u": b64u(statement),
            "signed_hex": signed.hex(),
            "signature": sig.hex(),
            "fingerprint": fp,
            "fingerprint_display": " ".join(fp[i:i + 4] for i in range(0, 32, 4)),
        },
    }


def public(entry):
    return {k: v for k, v in entry.items() if not k.startswith("_")}


def build():
    keys = {n: make_key(n) for n in NAMES}
    peer = {n: bytes.fromhex(keys[n]["peer_id"]) for n in NAMES}
    epk = {n: bytes.fromhex(keys[n]["encryption"]["public_key"]) for n in NAMES}
    esk = {n: keys[n]["_esk"] for n in NAMES}
    # The key's own X25519 export agrees with the raw scalar we keep.
    for n in NAMES:
        raw = X25519PrivateKey.from_private_bytes(esk[n]).private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        assert raw == esk[n]

    lo, hi = sorted([peer["owner"], peer["member"]])
    containers = {
        "space": b"\x02" + uuid16(SPACE_ID),
        "pair": b"\x01" + lo + hi,
    }
    assert len(containers["space"]) == 17 and len(containers["pair"]) == 65

    secrets = {("space", g): tagged("secret space %d" % g) for g in (1, 2, 3)}
    secrets[("pair", 1)] = tagged("secret pair 1")

    def commitment(c, g):
        return H(L("sealed-commitment"), containers[c], u64(g), secrets[(c, g)])

    commitments = [
        {"container": c, "generation": g, "secret": secrets[(c, g)].hex(), "commitment": commitment(c, g).hex()}
        for (c, g) in sorted(secrets)
    ]

    back_links = []
    for g in (2, 3):
        C = containers["space"]
        k = HKDF(b"", secrets[("space", g)], L("sealed-chain") + C + u64(g), 16)
        back = AES(k, secrets[("space", g - 1)], C + u64(g - 1))
        assert len(back) == 48
        assert AES_open(k, back, C + u64(g - 1)) == secrets[("space", g - 1)]
        back_links.append({"container": "space", "generation": g, "key": k.hex(), "back": back.hex()})

    lock_plan = [
        ("space", 1, "owner", "owner"),
        ("space", 1, "owner", "member"),
        ("space", 2, "keeper", "keeper"),
        ("space", 2, "keeper", "member"),
        ("space", 3, "owner", "stamper"),
        ("pair", 1, "owner", "owner"),
        ("pair", 1, "owner", "member"),
    ]
    locks = []
    for (c, g, s, r) in lock_plan:
        C = containers[c]
        info = L("sealed-lock") + C + u64(g)
        aad = peer[r] + peer[s] + commitment(c, g)
        ikmE = tagged("ephemeral %s %d %s %s" % (c, g, s, r))
        enc, ct = seal_auth(epk[r], info, aad, secrets[(c, g)], esk[s], ikmE)
        lock = enc + ct
        assert len(lock) == 80
        assert open_auth(enc, esk[r], info, aad, ct, epk[s]) == secrets[(c, g)]
        # Another sender's key does not open it.
        other = "stamper" if s != "stamper" else "keeper"
        try:
            open_auth(enc, esk[r], info, aad, ct, epk[other])
            raise AssertionError("a lock opened for the wrong sender")
        except InvalidTag:
            pass
        locks.append({
            "container": c, "generation": g, "sender": s, "recipient": r,
            "ephemeral": ikmE.hex(), "info": info.hex(), "aad": aad.hex(), "lock": lock.hex(),
        })

    # --- headers and items (sealed.md section 7) ---
    post_ids = [tagged("post id %d" % i)[:16] for i in range(3)]

    def as_uuid(b):
        h = b.hex()
        return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])

    to = sorted([keys["keeper"]["peer_id"], keys["owner"]["peer_id"]])
    salts = {n: tagged("salt " + n)[:16] for n in ("post-full", "post-minimal", "message")}
    header_plan = [
        ("post-full", {
            "author": keys["member"]["peer_id"], "generation": 2, "kind": "result", "salt": salts["post-full"].hex(),
            "space_id": SPACE_ID, "suite": 1, "type": "post", "v": 1,
            "reply_to": as_uuid(post_ids[0]), "supersedes": as_uuid(post_ids[1]), "to": to,
        }),
        ("post-minimal", {
            "author": keys["owner"]["peer_id"], "generation": 1, "kind": "obs", "salt": salts["post-minimal"].hex(),
            "space_id": SPACE_ID, "suite": 1, "type": "post", "v": 1,
        }),
        ("message", {
            "author": keys["owner"]["peer_id"], "generation": 1, "pair": [lo.hex(), hi.hex()],
            "salt": salts["message"].hex(), "suite": 1, "type": "message", "v": 1,
            "about": "sealed-vectors", "reply_to": as_uuid(post_ids[2]),
        }),
    ]
    headers = []
    header_bytes = {}
    for name, h in header_plan:
        b = canonical(h)
        assert len(b) <= 2048
        header_bytes[name] = b
        headers.append({"name": name, "salt": h["salt"], "utf8": b.decode("utf-8"), "digest": H(L("sealed-header"), b).hex()})

    content_plan = [
        ("post-full", ("space", 2), {
            "body": "D\u00e9j\u00e0 vu \u2014 line one\nline two \"quoted\" \\ \U0001F600\ttab \u0001",
            "budget": {"observed_at": "2026-09-10T12:00:00Z",
                       "output_tokens": {"estimated": False, "remaining": "1200", "unit": "tokens"}},
            "data": {"attribution": [as_uuid(post_ids[0])], "x_note": "sealed"},
            "fingerprints": [
                {"scheme": "git.commit", "value": "0123456789abcdef0123456789abcdef01234567"},
                {"scheme": "sha256.file", "value": tagged("file").hex()},
            ],
            "run_id": "0199eeee-ffff-7000-8111-222222222222",
            "title": "Sealed vector \u2713",
        }),
        ("post-minimal", ("space", 1), {}),
        ("message", ("pair", 1), {"body": "Hello over a sealed pair."}),
    ]
    items = []
    for name, sec, content in content_plan:
        hb = header_bytes[name]
        hd = H(L("sealed-header"), hb)
        salt = bytes.fromhex(json.loads(hb)["salt"])
        k = HKDF(salt, secrets[sec], L("sealed-item") + hd, 16)
        cb = canonical(content)
        ct = AES(k, cb, hd)
        assert AES_open(k, ct, hd) == cb
        assert 17 <= len(ct) <= 184320
        items.append({
            "header": name, "container": sec[0], "generation": sec[1],
            "content_utf8": cb.decode("utf-8"), "item_key": k.hex(), "ciphertext": ct.hex(),
            "ciphertext_digest": H(L("sealed-ciphertext"), ct).hex(),
            "transport": {"header": b64u(hb), "ciphertext": b64u(ct)},
        })

    # --- the object a sealed post carries (objects.md section 7) ---
    objects = []
    for item in items:
        if item["header"] == "message":
            continue
        h = json.loads(header_bytes[item["header"]])
        base = {"v": 1, "space_id": h["space_id"], "author_id": h["author"], "kind": h["kind"]}
        for m in ("to", "reply_to", "supersedes", "retracts"):
            if m in h:
                base[m] = h[m]
        base["sealed"] = {"ciphertext": item["ciphertext_digest"], "header": H(L("sealed-header"), header_bytes[item["header"]]).hex(), "suite": 1}
        author = next(n for n in NAMES if keys[n]["peer_id"] == h["author"])
        for form in ("unsigned", "signed"):
            o = dict(base)
            entry = {"item": item["header"], "form": form}
            if form == "signed":
                o["idempotency_key"] = "sealed-vector-" + item["header"]
                entry["idempotency_key"] = o["idempotency_key"]
            cb = canonical(o)
            oid = H(L("object"), cb)
            entry["canonical_utf8"] = cb.decode("utf-8")
            entry["object_id"] = oid.hex()
            if form == "signed":
                entry["signer"] = author
                entry["signature"] = keys[author]["_sk"].sign(L("object-signature") + oid).hex()
            objects.append(entry)

    # --- keeper lists and stamps (sealed.md section 8) ---
    keeper_lists = []
    for name, fields in [
        ("first", {"admission": "stamped", "change_every": 86400, "keepers": [keys["keeper"]["peer_id"]],
                   "revision": 1, "space_id": SPACE_ID, "stampers": [keys["stamper"]["peer_id"]], "v": 1}),
        ("open", {"admission": "open", "change_every": 60, "keepers": [], "revision": 2,
                  "space_id": SPACE_ID, "stampers": [], "v": 1}),
    ]:
        b = canonical(fields)
        keeper_lists.append({
            "name": name, "signer": "owner", "utf8": b.decode("utf-8"), "b64u": b64u(b),
            "signed_hex": (L("sealed-keepers") + b).hex(),
            "signature": keys["owner"]["_sk"].sign(L("sealed-keepers") + b).hex(),
        })

    stamps = []
    for name, issuer, subject, not_after in [
        ("by-stamper", "stamper", "member", 1790000000),
        ("by-owner-forever", "owner", "member", None),
    ]:
        s = {"issuer": keys[issuer]["peer_id"], "peer_id": keys[subject]["peer_id"], "v": 1}
        if not_after is not None:
            s["not_after"] = not_after
        b = canonical(s)
        stamps.append({
            "name": name, "issuer": issuer, "subject": subject, "not_after": not_after,
            "utf8": b.decode("utf-8"), "b64u": b64u(b),
            "signed_hex": (L("sealed-stamp") + b).hex(),
            "signature": keys[issuer]["_sk"].sign(L("sealed-stamp") + b).hex(),
        })

    return {
        "about": "Our own pin for the sealed layouts of protocol/sealed.md, which no published vector covers: encryption keys and their statements, signatures and fingerprints; pair and SPACE containers; commitments; back links; locks (HPKE mode_auth, suite 1); item headers, content, item keys and ciphertexts; sealed post objects; keeper lists; stamps. Computed by test/vectors/make_sealed_vectors.py, an independent Python implementation (hashlib, hmac, cryptography's X25519, HKDFExpand, AESGCM and Ed25519; its HPKE checked against RFC 9180 A.1 and cryptography's HPKE) that shares no code with shared/*.ts; checked against our code by test/sealed-vectors.test.ts. Regenerate with: python3 test/vectors/make_sealed_vectors.py",
        "test_only": True,
        "inputs": {
            "space_id": SPACE_ID,
            "seed": "SHA-256 of the ASCII text 'svc-vector sealed seed <name>'; S (sealed.md section 2) is the seed",
            "secret": "SHA-256 of 'svc-vector sealed secret <container> <generation>'",
            "ephemeral": "SHA-256 of 'svc-vector sealed ephemeral <container> <generation> <sender> <recipient>' (HPKE ikmE)",
            "salt": "first 16 bytes of SHA-256 of 'svc-vector sealed salt <header name>'",
            "post_ids": "first 16 bytes of SHA-256 of 'svc-vector sealed post id <i>', as a uuid",
            "pair": "the pair container is owner and member",
        },
        "keys": {n: public(keys[n]) for n in NAMES},
        "containers": {c: containers[c].hex() for c in containers},
        "commitments": commitments,
        "back_links": back_links,
        "locks": locks,
        "headers": headers,
        "items": items,
        "sealed_post_objects": objects,
        "keeper_lists": keeper_lists,
        "stamps": stamps,
    }


def main():
    self_check_hpke()
    text = json.dumps(build(), indent=2, ensure_ascii=False) + "\n"
    if "--check" in sys.argv:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print("sealed.json differs from what the generator computes", file=sys.stderr)
                sys.exit(1)
        print("sealed.json matches")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
