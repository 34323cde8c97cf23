"""Images: stored once each by the hash of their bytes; what a tool's result carries to the model."""

from __future__ import annotations

from server.state import Store


PNG = bytes.fromhex("89504e470d0a1a0a") + b"\x00" * 24


def test_the_same_bytes_are_stored_once_whoever_stores_them(tmp_path):
    store = Store(tmp_path)
    first = store.put_image("conv-1", "image/png", PNG)
    again = store.put_image("conv-2", "image/png", PNG)
    other = store.put_image("conv-1", "image/png", PNG + b"\x01")
    assert first == again != other and first.startswith("img-")
    assert store.db.execute("SELECT COUNT(*) FROM images").fetchone()[0] == 2
    assert store.image(first) == ("image/png", PNG)
    assert store.image("img-nosuch") is None
