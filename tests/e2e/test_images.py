"""End to end: images a user pastes, and image files the model reads, reach the provider as images
(Anthropic: image blocks; OpenAI-compatible servers: data URLs), are stored once each, shown in
the updates and the history, fetched with modus/chat/image; a model without vision refuses them
before any request; ACP prompts carry them; a scripted turn checks how many came."""

from __future__ import annotations

import base64
import sqlite3
import struct
import zlib
from pathlib import Path

import pytest
from acp import schema as acp
from pygls.exceptions import JsonRpcException

from fake_models import Call, FakeAnthropic, FakeOpenAI, Reply
from protocol import methods

from .acp_client import TIMEOUT, modus_acp, workspace_with
from .conftest import script
from .editor import Editor


def png(width: int = 2, height: int = 1, seed: int = 0) -> bytes:
    """A real PNG of `width`×`height` grey pixels (their shade: `seed`)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes([seed % 256]) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + b"\x00" * 32 + b"\xff\xd9"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def image(data: bytes, mime: str = "image/png") -> dict:
    return {"mimeType": mime, "data": b64(data)}


def stored_images(workspace: Path) -> int:
    with sqlite3.connect(workspace / ".modus" / "state" / "modus.sqlite3") as db:
        return db.execute("SELECT COUNT(*) FROM images").fetchone()[0]


def anthropic(url: str, **model) -> dict:
    return {"models": {"default": {"provider": "anthropic", "baseUrl": url, "model": "claude-sonnet-4-5", **model}}}


def openai(url: str, model: str = "gpt-4o", **more) -> dict:
    return {"models": {"default": {"provider": "openai", "baseUrl": url, "model": model, **more}}}


async def test_anthropic_gets_image_blocks_and_each_image_is_stored_once(editor, workspace):
    first, second = png(seed=1), png(3, 2, seed=2)
    with FakeAnthropic() as server:
        server.add(Reply("A grey pixel pair."), Reply("Again."), Reply("Third."))
        await editor.start(anthropic(server.url))
        sent = await editor.request(methods.CHAT_SEND, {"text": "what is this?", "images": [image(first), image(JPEG, "image/jpeg")]})
        await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 1)
        await editor.chat("and now?", images=[image(second)])
        await editor.chat("the first again", images=[image(first)])
    # the first request: the images first, then the text, bytes as sent
    [user] = server.requests[0].body["messages"]
    blocks = user["content"]
    assert [b["type"] for b in blocks] == ["image", "image", "text"]
    assert [(b["source"]["type"], b["source"]["media_type"]) for b in blocks[:2]] == [("base64", "image/png"), ("base64", "image/jpeg")]
    assert [base64.b64decode(b["source"]["data"]) for b in blocks[:2]] == [first, JPEG]
    # the third request carries the whole conversation: 2 + 1 + 1 images
    carried = [base64.b64decode(b["source"]["data"]) for m in server.requests[2].body["messages"] for b in m["content"] if b["type"] == "image"]
    assert carried == [first, JPEG, second, first]
    # stored once each, however often sent and however many requests carried them
    assert stored_images(workspace) == 3

    # shown in the update and the history as {id, mimeType}; fetched as they were sent
    [shown] = [u for u in editor.of_kind("message") if u["role"] == "user" and u.get("messageId") == sent["messageId"]]
    assert [i["mimeType"] for i in shown["images"]] == ["image/png", "image/jpeg"]
    history = (await editor.request(methods.CHAT_HISTORY, {"conversationId": sent["conversationId"]}))["messages"]
    users = [m for m in history if m["role"] == "user"]
    assert [len(m["images"]) for m in users] == [2, 1, 1]
    assert users[0]["images"] == shown["images"] and users[2]["images"][0]["id"] == users[0]["images"][0]["id"]
    fetched = await editor.request(methods.CHAT_IMAGE, {"id": shown["images"][0]["id"]})
    assert fetched["mimeType"] == "image/png" and base64.b64decode(fetched["data"]) == first
    with pytest.raises(JsonRpcException) as raised:
        await editor.request(methods.CHAT_IMAGE, {"id": "img-nosuch"})
    assert raised.value.code == -32602 and "id: unknown image: img-nosuch" in raised.value.message


async def test_the_images_survive_a_restart_of_the_server(workspace, tmp_path):
    with FakeOpenAI() as server:
        server.add(Reply("Seen."), Reply("Still seen."))
        first = Editor(workspace, tmp_path / "config")
        await first.start(openai(server.url))
        sent = await first.request(methods.CHAT_SEND, {"text": "look", "images": [image(png(seed=9))]})
        await first.wait_for(lambda: first.of_kind("turn_ended"))
        await first.stop()
        second = Editor(workspace, tmp_path / "config")
        await second.start(openai(server.url))
        await second.chat("and after the restart?", conversationId=sent["conversationId"])
        await second.stop()
    [user, _, again] = server.requests[1].body["messages"][1:]
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(png(seed=9))}}
    assert again == {"role": "user", "content": again["content"]} and isinstance(again["content"], str)


async def test_openai_gets_data_urls_and_read_file_of_a_png_follows_its_result(editor, workspace):
    picture = png(4, 4, seed=7)
    (workspace / "shot.png").write_bytes(picture)
    (workspace / "misnamed.dat").write_bytes(picture)
    with FakeOpenAI() as server:
        server.add(
            Reply("Reading.", [Call("call_a", "read_file", {"path": "shot.png"}), Call("call_b", "read_file", {"path": "misnamed.dat"})]),
            Reply("Both are grey squares."),
        )
        await editor.start(openai(server.url))
        await editor.chat("look at these", images=[image(JPEG, "image/jpeg")])
    first = server.requests[0].body["messages"][1]
    assert first["role"] == "user" and first["content"][0] == {"type": "text", "text": first["content"][0]["text"]}
    assert first["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + b64(JPEG)}}
    # the results first (text: a tool message holds no image), then a user message with each result's image
    after = server.requests[1].body["messages"][3:]
    assert [m["role"] for m in after] == ["tool", "tool", "user", "user"]
    assert after[0]["content"] == "shot.png: an image (image/png, 4×4 pixels, %d bytes), attached to this result." % len(picture)
    assert after[1]["content"].startswith("misnamed.dat: an image (image/png")
    for message, call in zip(after[2:], ("call_a", "call_b")):
        said, url = message["content"]
        assert call in said["text"] and url == {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(picture)}}
    completed = [u for u in editor.of_kind("tool_call") if u["status"] == "completed"]
    assert [u["images"][0]["mimeType"] for u in completed] == ["image/png", "image/png"]
    assert stored_images(workspace) == 2  # the JPEG, and the PNG once though read under two names


async def test_anthropic_gets_a_read_image_inside_the_tool_result(editor, workspace):
    (workspace / "shot.png").write_bytes(png(seed=5))
    with FakeAnthropic() as server:
        server.add(Reply("Reading.", [Call("toolu_a", "read_file", {"path": "shot.png"})]), Reply("Grey."))
        await editor.start(anthropic(server.url))
        await editor.chat("what is in shot.png?")
    [result] = [b for b in server.requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result"]
    text, picture = result["content"]
    assert text["type"] == "text" and text["text"].startswith("shot.png: an image (image/png, 2×1 pixels")
    assert picture["type"] == "image" and base64.b64decode(picture["source"]["data"]) == png(seed=5)


async def test_a_model_without_vision_refuses_images_before_any_request(editor, workspace):
    (workspace / "shot.png").write_bytes(png())
    with FakeOpenAI() as server:
        server.add(Reply("Reading.", [Call("call_a", "read_file", {"path": "shot.png"})]), Reply("I cannot see it."))
        await editor.start(openai(server.url, model="llama3"))  # a model Modus does not know: no vision
        with pytest.raises(JsonRpcException) as raised:
            await editor.request(methods.CHAT_SEND, {"text": "what is this?", "images": [image(png())]})
        assert raised.value.code == -32602
        assert "images: modus's model (openai llama3) cannot see images" in raised.value.message and "vision: true" in raised.value.message
        assert server.requests == [] and editor.of_kind("message") == []  # nothing sent, nothing stored
        # an image file it reads comes as a note
        await editor.chat("read shot.png")
    tool = server.requests[1].body["messages"][-1]
    assert tool["role"] == "tool" and "this model cannot see images (no vision)" in tool["content"]


async def test_the_vision_setting_overrides_what_modus_knows(editor):
    with FakeAnthropic() as server:
        await editor.start(anthropic(server.url, vision=False))
        with pytest.raises(JsonRpcException) as raised:
            await editor.request(methods.CHAT_SEND, {"text": "see", "images": [image(png())]})
    assert "cannot see images" in raised.value.message and server.requests == []


@pytest.mark.parametrize(
    "images, field",
    [
        ([image(png())] * 11, "images: at most 10 images a message, got 11"),
        ([image(png())] * 3 + [{"mimeType": "image/bmp", "data": b64(png())}], "images[3].mimeType: Input should be 'image/png'"),
        ([{"mimeType": "image/png", "data": "not base64!"}], "images[0].data: not valid base64"),
        ([image(JPEG, "image/png")], "images[0].mimeType: image/png, but the data is image/jpeg"),
        ([image(b"hello")], "images[0].data: not a PNG, JPEG, WebP or GIF image"),
        ([image(png()), image(png() + b"\0" * (5 * 1024 * 1024))], "images[1].data: larger than 5 MiB"),
        ([{"mimeType": "image/png"}], "images[0].data: Field required"),
    ],
)
async def test_bad_images_are_refused_naming_the_field(editor, images, field):
    await editor.start()
    with pytest.raises(JsonRpcException) as raised:
        await editor.request(methods.CHAT_SEND, {"text": "see", "images": images})
    assert raised.value.code == -32602 and field in raised.value.message
    assert editor.of_kind("message") == []
    assert (await editor.request(methods.STATE))["mode"]["slug"] == "code"  # the server goes on


async def test_a_scripted_turn_checks_the_images_it_expects(editor, workspace):
    await editor.start(script(workspace, {"text": "I see one.", "expectImages": 1}, {"text": "Two?", "expectImages": 3}))
    assert (await editor.chat("one", images=[image(png())]))["outcome"] == "completed"
    ended = await editor.chat("two more", images=[image(png(seed=1))])  # 2 in the request, not 3
    assert ended["outcome"] == "failed"
    assert ended["error"]["message"] == "The model request failed: The script's turn 2 expects 3 image(s); the request carried 2."


@pytest.mark.asyncio(loop_scope="function")
async def test_acp_offers_images_and_a_prompt_s_image_blocks_are_the_message_s(tmp_path):
    ws = workspace_with(tmp_path / "ws", [{"text": "I see it.", "expectImages": 1}])
    (tmp_path / "config").mkdir()
    async with modus_acp(tmp_path / "config") as agent:
        assert agent.initialized.agent_capabilities.prompt_capabilities.image is True
        sid = (await agent.new(ws)).session_id
        blocks = [acp.TextContentBlock(type="text", text="what is it?"), acp.ImageContentBlock(type="image", data=b64(png()), mime_type="image/png")]
        import asyncio

        answer = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=blocks), TIMEOUT)
        assert answer.stop_reason == "end_turn"
        assert "I see it." in agent.client.text(sid)
    assert stored_images(ws) == 1
    # loaded by another server: the user's message is told again with its image, as an image block
    async with modus_acp(tmp_path / "config") as again:
        await asyncio.wait_for(again.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[]), TIMEOUT)
        said = [u.content for u in again.client.updates[sid] if u.session_update == "user_message_chunk"]
    assert [(b.type, getattr(b, "text", None), getattr(b, "mime_type", None)) for b in said] == [
        ("text", "what is it?", None), ("image", None, "image/png"),
    ]
    assert base64.b64decode(said[1].data) == png()
    # an image gone from the store: the conversation is still told, and a note says what is missing
    with sqlite3.connect(ws / ".modus" / "state" / "modus.sqlite3") as db:
        db.execute("DELETE FROM images")
    async with modus_acp(tmp_path / "config") as third:
        await asyncio.wait_for(third.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[]), TIMEOUT)
        said = [u.content.type for u in third.client.updates[sid] if u.session_update == "user_message_chunk"]
        told = third.client.text(sid)
    assert said == ["text"] and "is no longer stored" in told and "I see it." in told


async def test_condensing_sends_the_condensed_part_s_images_with_the_summary_request(editor):
    picture = png(seed=4)
    with FakeAnthropic() as server:
        server.add(
            Reply("One.", usage={"input_tokens": 5_500, "output_tokens": 5}),
            Reply("Two.", usage={"input_tokens": 5_600, "output_tokens": 5}),
            Reply("Summary: the user showed a grey pixel pair."),
        )
        await editor.start(anthropic(server.url))
        await editor.chat(" ".join(f"first{i}" for i in range(300)), images=[image(picture)])
        await editor.chat("second")
        got = await editor.request(methods.CHAT_CONDENSE, {})
    assert got["after"] < got["before"]
    [ask] = server.requests[2].body["messages"]
    blocks = ask["content"]
    assert [b["type"] for b in blocks] == ["image", "text"] and base64.b64decode(blocks[0]["source"]["data"]) == picture
    assert "[image img-" in blocks[1]["text"] and "(image/png)]" in blocks[1]["text"]


async def test_edit_and_resend_keeps_the_message_s_images(editor, workspace):
    picture = png(seed=7)
    with FakeAnthropic() as server:
        server.add(Reply("A pixel."), Reply("Still a pixel."))
        await editor.start(anthropic(server.url))
        sent = await editor.request(methods.CHAT_SEND, {"text": "what is this?", "images": [image(picture)]})
        await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 1)
        edited = await editor.request(methods.CHAT_EDIT, {"conversationId": sent["conversationId"], "messageId": sent["messageId"], "text": "and its colour?"})
        await editor.wait_for(lambda: len(editor.of_kind("turn_ended")) == 2)
    [user] = server.requests[1].body["messages"]
    blocks = user["content"]
    assert [b["type"] for b in blocks] == ["image", "text"] and blocks[1]["text"].startswith("and its colour?")
    assert base64.b64decode(blocks[0]["source"]["data"]) == picture
    history = (await editor.request(methods.CHAT_HISTORY, {"conversationId": sent["conversationId"]}))["messages"]
    [again] = [m for m in history if m["role"] == "user"]
    assert again["id"] == edited["messageId"] and len(again["images"]) == 1
    assert stored_images(workspace) == 1


async def test_a_queued_message_taken_back_gives_back_its_images_and_none_is_stored(editor, workspace):
    sleep = {"toolCalls": [{"name": "execute_command", "arguments": {"command": "sleep 30"}}]}
    await editor.start({**script(workspace, sleep, {"text": "Stopped."}), "autoApprove": {"command": True}})
    sent = await editor.request(methods.CHAT_SEND, {"text": "wait"})
    cid = sent["conversationId"]
    await editor.wait_for(lambda: [u for u in editor.of_kind("tool_call") if u["status"] == "running"])
    pictures = [image(png(seed=3)), image(JPEG, "image/jpeg")]
    queued = await editor.request(methods.CHAT_SEND, {"text": "look at these", "images": pictures})
    taken = await editor.request(methods.CHAT_UNQUEUE, {"conversationId": cid, "messageId": queued["messageId"]})
    await editor.request(methods.CHAT_CANCEL, {"conversationId": cid})
    await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    assert queued["queued"] is True
    # the composer gets the images back as they were sent, with the text
    assert taken == {"conversationId": cid, "messageId": queued["messageId"], "text": "look at these", "images": pictures}
    # the update tells every client it went, without the bytes
    assert editor.of_kind("unqueued") == [{"kind": "unqueued", "conversationId": cid, "messageId": queued["messageId"], "text": "look at these"}]
    assert stored_images(workspace) == 0
