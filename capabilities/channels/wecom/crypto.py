"""WeCom's callback cryptography: ``msg_signature`` and the AES-256-CBC envelope.

- signature: SHA-1 of the sorted concatenation of the callback Token, ``timestamp``, ``nonce``
  and the encrypted text (``echostr`` in the GET handshake, ``Encrypt`` in an event);
- envelope: AES-256-CBC with the key ``base64(EncodingAESKey + "=")`` (32 bytes) and its first
  16 bytes as IV, PKCS#7 padding to 32-byte blocks; the plaintext is 16 random bytes, the
  message's length (4 bytes, network order), the message, and the CorpID it was sent to.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import struct

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from capabilities.channels.model import MalformedUpdate, Unauthorized

BLOCK = 32


def aes_key(encoding_aes_key: str) -> bytes:
    """The 32-byte key an EncodingAESKey stands for; ValueError when it is not one."""
    try:
        key = base64.b64decode(encoding_aes_key + "=", validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if len(encoding_aes_key) != 43 or len(key) != 32:
        raise ValueError("an EncodingAESKey is 43 characters of base64 (32 bytes)")
    return key


def signature(token: str, timestamp: str, nonce: str, encrypted: str) -> str:
    return hashlib.sha1("".join(sorted([token, timestamp, nonce, encrypted])).encode()).hexdigest()


def check_signature(token: str, query: dict[str, str], encrypted: str) -> None:
    expected = signature(token, query.get("timestamp", ""), query.get("nonce", ""), encrypted)
    if not hmac.compare_digest(query.get("msg_signature", "").encode(), expected.encode()):
        raise Unauthorized("the call's msg_signature does not check out")


def decrypt(key: bytes, encrypted: str, corp_id: str) -> str:
    """The message inside ``encrypted``; Unauthorized when it was not made with our key for our CorpID."""
    try:
        data = base64.b64decode(encrypted, validate=True)
    except (binascii.Error, ValueError):
        raise MalformedUpdate("the encrypted text is not base64") from None
    if not data or len(data) % 16:
        raise MalformedUpdate("the encrypted text is not whole AES blocks")
    decryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).decryptor()
    plain = decryptor.update(data) + decryptor.finalize()
    pad = plain[-1]
    if not 1 <= pad <= BLOCK or plain[-pad:] != bytes([pad]) * pad or len(plain) < 20 + pad:
        raise Unauthorized("the encrypted text does not decrypt with this EncodingAESKey")
    body = plain[16:-pad]
    (length,) = struct.unpack(">I", body[:4])
    message, receiver = body[4:4 + length], body[4 + length:]
    if len(message) != length or receiver.decode("utf-8", "replace") != corp_id:
        raise Unauthorized("the encrypted message is not for this CorpID")
    return message.decode("utf-8")


def encrypt(key: bytes, message: str, corp_id: str, *, random: bytes | None = None) -> str:
    """The envelope WeCom would send (used to answer in kind, and by tests)."""
    body = (random or os.urandom(16)) + struct.pack(">I", len(message.encode())) + message.encode() + corp_id.encode()
    pad = BLOCK - len(body) % BLOCK
    body += bytes([pad]) * pad
    encryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    return base64.b64encode(encryptor.update(body) + encryptor.finalize()).decode()
