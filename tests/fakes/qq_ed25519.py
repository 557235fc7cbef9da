"""Ed25519 (RFC 8032) in pure Python, for the QQ official bot fake: Python's standard library has
no Ed25519 and the fakes may use only the standard library (plus python3-websockets).

This is RFC 8032 section 6's reference algorithm (extended twisted Edwards coordinates), checked
against the RFC's test vectors in test_fake_qqofficial.py. It is slow (a few milliseconds per
signature) and not constant-time: it is for tests, never for secrets that matter.

QQ's key pair comes from the bot secret: the secret repeated until it has at least 32 bytes, its
first 32 bytes are the Ed25519 seed (bot-docs interface-framework/sign.md).

    seed = qq_seed("naOC0ocQE3shWLAfffVLB1rhYPG7")
    sig = sign(seed, b"1725442341" + body)            # 64 bytes
    ok = verify(public_key(seed), b"1725442341" + body, sig)
"""

import hashlib

_P = 2 ** 255 - 19
_Q = 2 ** 252 + 27742317777372353535851937790883648493


def _inv(x):
    return pow(x, _P - 2, _P)


_D = -121665 * _inv(121666) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def _add(p1, p2):
    a = (p1[1] - p1[0]) * (p2[1] - p2[0]) % _P
    b = (p1[1] + p1[0]) * (p2[1] + p2[0]) % _P
    c = 2 * p1[3] * p2[3] * _D % _P
    d = 2 * p1[2] * p2[2] % _P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _mul(s, point):
    acc = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            acc = _add(acc, point)
        point = _add(point, point)
        s >>= 1
    return acc


def _equal(p1, p2):
    return ((p1[0] * p2[2] - p2[0] * p1[2]) % _P == 0 and
            (p1[1] * p2[2] - p2[1] * p1[2]) % _P == 0)


def _recover_x(y, sign):
    if y >= _P:
        return None
    x2 = (y * y - 1) * _inv(_D * y * y + 1) % _P
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P != 0:
        x = x * _SQRT_M1 % _P
    if (x * x - x2) % _P != 0:
        return None
    if (x & 1) != sign:
        x = _P - x
    return x


_GY = 4 * _inv(5) % _P
_GX = _recover_x(_GY, 0)
_G = (_GX, _GY, 1, _GX * _GY % _P)


def _compress(point):
    zinv = _inv(point[2])
    x, y = point[0] * zinv % _P, point[1] * zinv % _P
    return int.to_bytes(y | ((x & 1) << 255), 32, "little")


def _decompress(data):
    if len(data) != 32:
        return None
    y = int.from_bytes(data, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    x = _recover_x(y, sign)
    if x is None:
        return None
    return (x, y, 1, x * y % _P)


def _expand(seed):
    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little")
    a &= (1 << 254) - 8
    a |= 1 << 254
    return a, h[32:]


def _hash_mod_q(data):
    return int.from_bytes(hashlib.sha512(data).digest(), "little") % _Q


def public_key(seed):
    """The 32-byte public key of a 32-byte seed."""
    if len(seed) != 32:
        raise ValueError("an Ed25519 seed has 32 bytes")
    a, _ = _expand(seed)
    return _compress(_mul(a, _G))


def sign(seed, message):
    """The 64-byte signature of `message` (bytes) with the key pair of `seed`."""
    if len(seed) != 32:
        raise ValueError("an Ed25519 seed has 32 bytes")
    a, prefix = _expand(seed)
    pub = _compress(_mul(a, _G))
    r = _hash_mod_q(prefix + message)
    r_enc = _compress(_mul(r, _G))
    h = _hash_mod_q(r_enc + pub + message)
    s = (r + h * a) % _Q
    return r_enc + int.to_bytes(s, 32, "little")


def verify(public, message, signature):
    """True when `signature` (64 bytes) signs `message` under `public` (32 bytes)."""
    if len(public) != 32 or len(signature) != 64:
        return False
    a_point = _decompress(public)
    if a_point is None:
        return False
    r_enc = signature[:32]
    r_point = _decompress(r_enc)
    if r_point is None:
        return False
    s = int.from_bytes(signature[32:], "little")
    if s >= _Q:
        return False
    h = _hash_mod_q(r_enc + public + message)
    return _equal(_mul(s, _G), _add(r_point, _mul(h, a_point)))


def qq_seed(bot_secret):
    """QQ's seed: the bot secret (str or bytes) repeated to at least 32 bytes, first 32."""
    raw = bot_secret.encode("utf-8") if isinstance(bot_secret, str) else bytes(bot_secret)
    if not raw:
        raise ValueError("the bot secret is empty")
    while len(raw) < 32:
        raw += raw
    return raw[:32]


def qq_sign_hex(bot_secret, message):
    """Lowercase hex of the signature of `message` (str or bytes) with the bot secret's key."""
    data = message.encode("utf-8") if isinstance(message, str) else message
    return sign(qq_seed(bot_secret), data).hex()


def qq_verify_hex(bot_secret, message, hex_signature):
    data = message.encode("utf-8") if isinstance(message, str) else message
    try:
        sig = bytes.fromhex(hex_signature)
    except (ValueError, TypeError):
        return False
    return verify(public_key(qq_seed(bot_secret)), data, sig)
