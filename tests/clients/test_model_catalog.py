"""The bridge's model catalog, read by the real clients: the Codex CLI,
whose provider's `model_catalog_url` is the bridge's `/v1/models`, and the
official `openai` SDK's `client.models.list()`.

Codex decides from its catalog entry for a model whether an attached image
is sent or replaced by a note, which reasoning efforts it offers and sends,
and whether it runs the model in code mode. The models here are names Codex
does not know: only the bridge's catalog can say any of that about them."""

from __future__ import annotations

import json
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

import harness
from codex_runs import Run, codex_home, offered, upstream_turns

# A backend that takes `reasoning_effort` (clamped to high, as vLLM's
# `reasoning_efforts` would); the demo upstream lists one model,
# `wirebridge-demo`, and answers any name.
BRIDGE_CONFIG = """\
profile = "effortful"

[profiles.effortful]
max_tokens_field = "max_completion_tokens"
text_parts_as_string = false
reasoning_effort = true

[models."local-reader"]
display_name = "Local reader"
input_modalities = ["text"]

[models."local-coder"]
code_mode = true
reasoning_efforts = ["low", "medium"]
default_reasoning_effort = "low"
"""


@pytest.fixture(scope="module")
def catalog_chain(wirebridge, log_dir, tmp_path_factory):
    config = tmp_path_factory.mktemp("bridge") / "bridge.toml"
    config.write_text(BRIDGE_CONFIG)
    chain = harness.start_chain(log_dir, "catalog", "chat", extra=["--config", str(config)])
    yield chain
    harness.stop_checked(chain)


def png(path: Path) -> Path:
    """A 4×4 red PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * 4 for _ in range(4))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    return path


def codex_catalog(codex: Path, chain: harness.Chain, home: Path) -> dict[str, dict]:
    """The catalog Codex read from the bridge (`codex debug models`), by slug."""
    done = subprocess.run([str(codex), "debug", "models"], capture_output=True, text=True,
                          env=codex_home(home, chain, catalog=True), stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return {m["slug"]: m for m in json.loads(done.stdout)["models"]}


def user_parts(chat: dict) -> list[dict]:
    """The content parts of the Chat request's user messages."""
    parts = []
    for message in chat["messages"]:
        if message["role"] == "user" and isinstance(message["content"], list):
            parts += message["content"]
    return parts


def catalog_fetches(chain: harness.Chain, mark: int) -> list[harness.Captured]:
    return [c for c in chain.tap.since(mark) if c.method == "GET" and c.path.startswith("/v1/models")]


def test_codex_reads_the_catalog_the_bridge_builds(codex, catalog_chain, tmp_path):
    """Codex asks the bridge (`?client_version=`), the bridge asks the
    upstream for its plain list, and Codex's catalog is the upstream's model
    with the settings' two after it, by name."""
    mark = catalog_chain.tap.mark()
    models = codex_catalog(codex, catalog_chain, tmp_path / "home")
    assert list(models) == ["wirebridge-demo", "local-coder", "local-reader"]
    fetched = catalog_fetches(catalog_chain, mark)
    assert [c.path for c in fetched] == ["/v1/models"], fetched
    assert fetched[0].headers["authorization"] == "Bearer sk-codex-test"

    demo, reader, coder = models["wirebridge-demo"], models["local-reader"], models["local-coder"]
    assert demo["input_modalities"] == ["text", "image"]
    assert [level["effort"] for level in demo["supported_reasoning_levels"]] == ["low", "medium", "high"]
    assert demo["default_reasoning_level"] == "medium"
    assert demo["use_responses_lite"] is False
    assert reader["display_name"] == "Local reader"
    assert reader["input_modalities"] == ["text"]
    assert [level["effort"] for level in coder["supported_reasoning_levels"]] == ["low", "medium"]
    assert coder["default_reasoning_level"] == "low"
    assert coder["use_responses_lite"] is True
    assert coder["tool_mode"] == "code_mode_only"


def test_an_attached_image_reaches_a_model_the_catalog_says_takes_images(codex, catalog_chain, tmp_path):
    """`codex exec -i IMAGE` on the upstream's model, which takes text and
    images by default: the image reaches the backend as an `image_url` part."""
    image = png(tmp_path / "red.png")
    mark = catalog_chain.tap.mark()
    run = Run(codex, catalog_chain, tmp_path / "home", tmp_path / "work", "wirebridge-demo",
              "What colour is this picture?", images=(image,), catalog=True)
    assert run.code == 0, run.report()
    assert catalog_fetches(catalog_chain, mark), "Codex did not read the catalog"
    (turn,) = upstream_turns(catalog_chain, mark)
    images = [p for p in user_parts(turn) if p.get("type") == "image_url"]
    assert len(images) == 1, user_parts(turn)
    assert images[0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_a_text_only_model_gets_no_image(codex, catalog_chain, tmp_path):
    """The same run on `local-reader`, which the settings say takes text
    only: Codex leaves the image out (a note in its place), so the backend
    is sent none."""
    image = png(tmp_path / "red.png")
    mark = catalog_chain.tap.mark()
    run = Run(codex, catalog_chain, tmp_path / "home", tmp_path / "work", "local-reader",
              "What colour is this picture?", images=(image,), catalog=True)
    assert run.code == 0, run.report()
    (turn,) = upstream_turns(catalog_chain, mark)
    parts = user_parts(turn)
    assert parts and all(p.get("type") == "text" for p in parts), parts


def test_a_code_mode_model_with_the_catalogs_efforts(codex, catalog_chain, tmp_path):
    """`local-coder` is code mode in the catalog only: Codex sends no
    `tools` array, its tools in an `additional_tools` item, one `exec` tool
    running JavaScript. Asked for `xhigh`, Codex sends the highest effort the
    catalog offers, `medium` (the profile alone would have sent `high`)."""
    mark = catalog_chain.tap.mark()
    script = "const r = await tools.exec_command({cmd: 'printf catalog-code-mode > proof.txt && cat proof.txt'}); text(r.output);"
    run = Run(codex, catalog_chain, tmp_path / "home", tmp_path / "work", "local-coder",
              f'call functions__exec with input="{script}"', 'model_reasoning_effort="xhigh"', catalog=True)
    assert run.code == 0, run.report()
    assert (run.work / "proof.txt").read_text() == "catalog-code-mode"
    assert "catalog-code-mode" in run.final_answer()

    first, second = upstream_turns(catalog_chain, mark)
    tools = offered(first)
    assert "functions__exec" in tools and "functions__wait" in tools, tools
    assert "exec_command" not in tools, tools
    assert first["parallel_tool_calls"] is False
    assert first["reasoning_effort"] == second["reasoning_effort"] == "medium"
    call = next(m for m in second["messages"] if m["role"] == "assistant" and m.get("tool_calls"))
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"input": script}


def test_without_an_effort_codex_sends_the_catalogs_default(codex, catalog_chain, tmp_path):
    """No effort configured: Codex sends the model's default in the
    catalog, `low`."""
    mark = catalog_chain.tap.mark()
    run = Run(codex, catalog_chain, tmp_path / "home", tmp_path / "work", "local-coder", "Hello", catalog=True)
    assert run.code == 0, run.report()
    (turn,) = upstream_turns(catalog_chain, mark)
    assert turn["reasoning_effort"] == "low"


def test_the_sdk_lists_the_upstream_models(catalog_chain):
    """Any other client gets the upstream's own list, which the official
    SDK reads into `Model` objects."""
    client = harness.client(catalog_chain)
    models = list(client.models.list())
    assert [m.id for m in models] == ["wirebridge-demo"]
    assert models[0].object == "model"
    assert models[0].owned_by == "wirebridge"
    assert isinstance(models[0].created, int)


def fetch_catalog(chain: harness.Chain, if_none_match: str | None = None):
    """Codex's request for its catalog: the status, headers and body."""
    import urllib.error
    import urllib.request

    headers = {"authorization": "Bearer sk-codex-test"}
    if if_none_match is not None:
        headers["if-none-match"] = if_none_match
    request = urllib.request.Request(chain.base_url + "/models?client_version=0.171.0", headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as reply:
            return reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as not_ok:
        return not_ok.code, not_ok.headers, not_ok.read()


def test_the_catalog_has_a_tag_and_is_not_sent_again_while_it_holds(catalog_chain, wirebridge, log_dir,
                                                                   tmp_path):
    """Codex keeps the catalog's tag (`ETag`, also `X-Models-Etag`) with its
    copy; asked with it in `If-None-Match`, the bridge answers 304 with no
    body. Another catalog has another tag."""
    status, headers, body = fetch_catalog(catalog_chain)
    assert status == 200 and json.loads(body)["models"]
    tag = headers["etag"]
    assert tag.startswith('"') and tag.endswith('"'), tag
    assert headers["x-models-etag"] == tag
    # The tag is of the catalog, not of the request: it holds.
    assert fetch_catalog(catalog_chain)[1]["etag"] == tag

    status, headers, body = fetch_catalog(catalog_chain, if_none_match=tag)
    assert (status, body) == (304, b"")
    assert headers["etag"] == tag
    status, _, body = fetch_catalog(catalog_chain, if_none_match='"not-this-one"')
    assert status == 200 and json.loads(body)["models"]

    # A bridge whose settings say something else of a model: another tag,
    # and the old one gets the whole catalog.
    config = tmp_path / "bridge.toml"
    config.write_text(BRIDGE_CONFIG.replace('"Local reader"', '"Local reader, renamed"'))
    changed = harness.start_chain(log_dir, "catalog-changed", "chat", extra=["--config", str(config)])
    try:
        status, headers, body = fetch_catalog(changed, if_none_match=tag)
        assert status == 200
        assert headers["etag"] != tag and headers["x-models-etag"] == headers["etag"]
        names = {m["slug"]: m["display_name"] for m in json.loads(body)["models"]}
        assert names["local-reader"] == "Local reader, renamed"
    finally:
        harness.stop_checked(changed)
