"""The client against a real `arbor serve --http --tenants` (the binary in $ARBOR_BIN), with
tokens issued the way an operator issues them."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import tempfile
from typing import Dict, Iterator

import pytest

from arbor_client import (
    Arbor,
    ArborChatMemory,
    AsyncArbor,
    Forbidden,
    InvalidRequest,
    NotFound,
    PreconditionFailed,
    Unauthorized,
    Unavailable,
)

ARBOR = os.environ.get("ARBOR_BIN", "")


def arbor(root: str, *args: str) -> str:
    env = {**os.environ, "ARBOR_EMBEDDER": "hashing"}
    env.pop("ARBOR_LOG", None)
    done = subprocess.run([ARBOR, "--root", root, *args], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def issue(root: str, tenant: str, *args: str) -> str:
    return json.loads(arbor(root, "--json", "tokens", "create", "--tenant", tenant, *args))["token"]


@pytest.fixture(scope="module")
def server() -> Iterator[Dict[str, str]]:
    if not os.path.isfile(ARBOR):
        pytest.fail("set ARBOR_BIN to an arbor binary (cargo xtask clients does)")
    with tempfile.TemporaryDirectory() as scratch:
        root = os.path.join(scratch, "store")
        arbor(root, "init", "--embedder", "hashing")
        tokens = {
            "acme": issue(root, "acme", "--conversation", "c1", "--project", "p1"),
            "globex": issue(root, "globex", "--conversation", "c1", "--project", "p1"),
            "operator": issue(root, "acme", "--project", "p1", "--operator"),
        }
        process = subprocess.Popen(
            [ARBOR, "--root", root, "serve", "--http", "--listen", "127.0.0.1:0", "--tenants"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            line = process.stdout.readline() if process.stdout else ""
            match = re.match(r"listening on ([0-9.]+:[0-9]+)", line)
            assert match, f"unexpected first line from arbor serve: {line!r}"
            yield {"url": f"http://{match.group(1)}", **tokens}
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_save_retrieve_correct_forget(server: Dict[str, str]) -> None:
    with Arbor(server["url"], server["acme"]) as memory:
        saved = memory.add("Dana prefers morning meetings before 10am.", labels=["calendar"])
        chunk = saved["chunks"][0]
        assert chunk["status"] == "active" and "retrievable now" in saved["message"], saved
        pack = memory.retrieve("when does Dana like meetings?")
        assert pack["answer"] == "found" and "morning meetings" in pack["text"], pack
        assert memory.retrieve("What is the capital of France?")["answer"] == "nothing_relevant"
        hits = memory.search("Dana meetings")
        assert hits and hits[0]["id"] == chunk["leaf_id"], hits
        node = memory.get(chunk["leaf_id"])
        assert (node["version"], node["actor"]) == (1, "agent"), node
        with pytest.raises(PreconditionFailed) as stale:
            memory.correct(node["id"], version=7, text="Dana prefers meetings after 2pm.")
        assert stale.value.code == "precondition_failed" and stale.value.status == 412
        corrected = memory.correct(node["id"], version=1, text="Dana prefers meetings after 2pm.")
        assert corrected["version"] == 2 and corrected["status"] == "active", corrected
        forgotten = memory.forget(corrected["leaf_id"])
        assert forgotten["versions"] == 2, forgotten
        with pytest.raises(NotFound):
            memory.get(corrected["leaf_id"])


def test_errors_carry_the_stable_codes(server: Dict[str, str]) -> None:
    with Arbor(server["url"], server["acme"]) as acme, Arbor(server["url"], server["globex"]) as globex:
        theirs = acme.add("Acme's launch codename is Bluebird.")["chunks"][0]["leaf_id"]
        with pytest.raises(NotFound) as missing:
            globex.get(theirs)
        assert missing.value.code == "not_found" and missing.value.status == 404
        assert "Bluebird" not in globex.retrieve("Bluebird codename")["text"]
        with pytest.raises(InvalidRequest) as empty:
            acme.add("   ")
        assert empty.value.code == "invalid_request"
        with pytest.raises(Forbidden):
            acme.pending()
    with Arbor(server["url"], "arbor_not-a-token") as stranger, pytest.raises(Unauthorized):
        stranger.status()
    with Arbor("http://127.0.0.1:9", timeout=2) as nobody, pytest.raises(Unavailable):
        nobody.status()


def test_an_operator_reviews_what_waits(server: Dict[str, str]) -> None:
    with Arbor(server["url"], server["operator"]) as operator, Arbor(server["url"], server["acme"]) as agent:
        saved = operator.add("The team ships releases on Tuesdays.")
        candidate = saved["chunks"][0]
        assert candidate["status"] == "candidate" and "confirm" in saved["message"], saved
        assert candidate["leaf_id"] in [item["id"] for item in operator.pending()]
        assert "Tuesdays" not in agent.retrieve("when does the team ship releases?")["text"]
        assert operator.confirm(candidate["leaf_id"])["status"] == "active"
        assert "Tuesdays" in agent.retrieve("when does the team ship releases?")["text"]


def test_chat_messages_and_the_chain_memory(server: Dict[str, str]) -> None:
    with Arbor(server["url"], server["globex"]) as memory:
        results = memory.add_messages(
            [
                {"role": "system", "content": "You are a travel assistant."},
                {"role": "user", "content": [{"type": "text", "text": "I moved to Lisbon last month."}]},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1"}]},
            ]
        )["results"]
        assert [("skipped" in r, "saved" in r) for r in results] == [(True, False), (False, True), (True, False)]
        chain = ArborChatMemory(memory, input_key="question", output_key="answer")
        chain.save_context({"question": "My favourite café is Fabrica in Lisbon."}, {"answer": "Noted!"})
        loaded = chain.load_memory_variables({"question": "what is my favourite café?"})
        assert "Fabrica" in loaded["memory"], loaded


def test_the_async_client_says_the_same(server: Dict[str, str]) -> None:
    async def run() -> None:
        async with AsyncArbor(server["url"], server["globex"]) as memory:
            saved, status = await asyncio.gather(memory.add("Globex launches Falcon in March."), memory.status())
            assert saved["chunks"][0]["status"] == "active", saved
            assert status["write_namespace"] == "conversation:c1", status
            pack = await memory.retrieve("when does Falcon launch?", max_tokens=200)
            assert "Falcon" in pack["text"], pack
            with pytest.raises(NotFound):
                await memory.forget("leaf-01m8q900000000000000000000")

    asyncio.run(run())
