"""Images a user sends (PROTOCOL.md, "Images"): checked before anything is stored.

A message carries at most MAX_IMAGES, each a PNG, JPEG, WebP or GIF of at most MAX_IMAGE_BYTES
once decoded, its bytes in base64. The bytes must be of the type the client declared (a provider
refuses an image whose bytes are another type than it says): the type is read from the bytes'
first ones, as `file` does. A refusal names the field: `images[3].mimeType: …`.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, NamedTuple, Sequence, get_args

from protocol.messages import MAX_IMAGE_BYTES, MAX_IMAGES, ImageMimeType

from .errors import BadRequest

#: The types a message's images may be, and those Modus recognises in a file's bytes.
MIME_TYPES: tuple[str, ...] = get_args(ImageMimeType)

#: A file read with read_file is an image when its name ends so (and its bytes say it).
EXTENSIONS = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif"}


class Image(NamedTuple):
    mime_type: str
    data: bytes


def sniff(data: bytes) -> str | None:
    """The image type of these bytes (one of MIME_TYPES), None when they are none of them."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def decode(images: Sequence[Any] | None, field: str = "images") -> list[Image]:
    """The images of a message (each with `mime_type` and base64 `data`), checked and decoded;
    BadRequest naming the first problem's field."""
    if not images:
        return []
    if len(images) > MAX_IMAGES:
        raise BadRequest(f"{field}: at most {MAX_IMAGES} images a message, got {len(images)}")
    found = []
    for n, image in enumerate(images):
        where = f"{field}[{n}]"
        declared = image.mime_type
        if declared not in MIME_TYPES:
            raise BadRequest(f"{where}.mimeType: must be one of {', '.join(MIME_TYPES)}, got {declared!r}")
        if len(image.data) > (MAX_IMAGE_BYTES + 2) // 3 * 4 + 4:  # not decoded to find it too large
            raise BadRequest(f"{where}.data: larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MiB")
        try:
            data = base64.b64decode(image.data, validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest(f"{where}.data: not valid base64") from None
        if len(data) > MAX_IMAGE_BYTES:
            raise BadRequest(f"{where}.data: {len(data):,} bytes, larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MiB")
        if not data:
            raise BadRequest(f"{where}.data: empty")
        actual = sniff(data)
        if actual is None:
            raise BadRequest(f"{where}.data: not a PNG, JPEG, WebP or GIF image")
        if actual != declared:
            raise BadRequest(f"{where}.mimeType: {declared}, but the data is {actual}")
        found.append(Image(declared, data))
    return found
