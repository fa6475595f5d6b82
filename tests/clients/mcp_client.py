"""Drives `arbor serve --mcp` with the official Python MCP SDK (PyPI `mcp`), over stdio and
over streamable HTTP: initialize, list tools, call each tool, check the results (the SDK itself
validates structured results against each tool's output schema), corrections bound to a
version, and that nothing outside the server's bound scope can be read or even detected.

Usage: python tests/clients/mcp_client.py --arbor target/debug/arbor
Run by `cargo xtask clients` (part of `cargo xtask ci`).
"""

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile

from mcp import ClientSession
from mcp import MCPError
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOOLS = {
    "memory_retrieve",
    "memory_browse",
    "memory_read",
    "memory_save",
    "memory_correct",
    "memory_forget",
    "memory_catalog",
    "memory_dream",
}
BOUND = ["--conversation", "c1", "--project", "p1"]
OTHER = ["--conversation", "c2", "--project", "p2"]
# A host that relays what its user says: saves in a conversation are current at once.
AS_USER = ["--speaker", "user"]
NEVER = "leaf-01m8q900000000000000000000"


def arbor(binary, root, *args, stdin=""):
    env = dict(os.environ, ARBOR_EMBEDDER="hashing")
    done = subprocess.run([binary, "--root", root, *args], input=stdin, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"arbor {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def ingest(binary, root, scope, lines):
    events = "".join(json.dumps({"text": line}) + "\n" for line in lines)
    report = json.loads(arbor(binary, root, "--json", "ingest", *scope, stdin=events))
    return [r["report"]["chunks"][0]["leaf_id"] for r in report["results"]]


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def text_of(result):
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def result_of(result):
    """A tool's answer: one text, compact JSON (memory_retrieve's is lines of text instead)."""
    check(not result.is_error, text_of(result)[:300])
    check(result.structured_content is None, "each answer is sent once, as text")
    return json.loads(text_of(result))


def error_of(result):
    check(result.is_error, f"expected a tool error, got {text_of(result)[:300]}")
    return json.loads(text_of(result))["error"]


async def refused(session, tool, arguments, word):
    """Arguments that do not fit a tool's input schema are refused as invalid parameters."""
    try:
        result = await session.call_tool(tool, arguments)
    except MCPError as error:
        check(word in str(error), f"{tool} refusal names {word}: {error}")
        return
    check(result.is_error and word in text_of(result), f"{tool} accepted {arguments}: {text_of(result)}")


async def exercise(session, mine, theirs, transport):
    init = await session.initialize()
    check(init.server_info.name == "arbor", init)
    check("memory_retrieve" in (init.instructions or ""), "instructions tell the agent when to retrieve")

    listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    check(set(tools) == TOOLS, f"tools: {sorted(tools)}")
    for tool in tools.values():
        check(tool.description and len(tool.description) > 40, f"{tool.name} has a real description")
        check(tool.input_schema.get("type") == "object", f"{tool.name} input schema")
        check(tool.output_schema is None, f"{tool.name}: answers are text, with no schema to pay for")
        properties = tool.input_schema.get("properties", {})
        for scope in ("namespace", "namespaces", "read_chain", "path", "conversation", "project"):
            check(scope not in properties, f"{tool.name} must not take {scope}")
    check("before answering" in tools["memory_retrieve"].description, "retrieve says when to call it")
    # What every conversation pays before its first word: the tool definitions.
    definitions = len(json.dumps([tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]))
    print(f"tools/list ({transport}): {len(listed.tools)} tools, {definitions} characters")
    check(definitions <= 6000, f"tool definitions are {definitions} characters; the budget is 6000")

    # memory_save lands in the bound write namespace.
    saved = await session.call_tool("memory_save", {"text": f"My favorite tea is sencha ({transport}).", "message_id": "py-1"})
    check(not saved.is_error, text_of(saved))
    chunk = result_of(saved)["chunks"][0]
    check(chunk["namespace"] == "conversation:c1" and chunk["outcome"] in ("created", "superseding"), chunk)

    # Bound as the user (a host relaying its user's words), a save in a conversation is current.
    check(chunk["status"] == "active", chunk)

    # The daily view is a resource a host attaches when work resumes: today's memories of this
    # scope only, highlights first; it costs nothing in the tool definitions.
    resources = await session.list_resources()
    check([str(r.uri) for r in resources.resources] == ["arbor://daily", "arbor://profile"], resources)
    templates = await session.list_resource_templates()
    uris = [t.uri_template for t in templates.resource_templates]
    check(uris == ["arbor://daily/{date}", "arbor://profile/{subject}"], templates)
    today = json.loads((await session.read_resource("arbor://daily")).contents[0].text)
    texts = [m["text"] for m in today["memories"]]
    check(any("sencha" in t for t in texts), texts)
    check(not any("Quentin" in t for t in texts), f"another scope's day: {texts}")
    check(today["highlights"] and all(0 <= h < len(texts) for h in today["highlights"]), today)
    try:
        await session.read_resource("arbor://daily/yesterday")
        check(False, "a day that is not a date is refused")
    except MCPError as error:
        check("YYYY-MM-DD" in str(error), str(error))

    # memory_retrieve answers in a few lines of text a model reads: each memory once, with its
    # date, id and version.
    pack = await session.call_tool("memory_retrieve", {"query": "when does Dana like meetings?"})
    check(not pack.is_error, text_of(pack))
    lines = [line for line in text_of(pack).splitlines() if line.startswith("- [")]
    check(lines and "morning meetings" in lines[0] and mine[0] in lines[0], text_of(pack))
    check(pack.structured_content is None, "the answer is sent once, as text")
    print(f"memory_retrieve ({transport}): {len(lines)} memories in {len(text_of(pack))} characters")
    nothing = text_of(await session.call_tool("memory_retrieve", {"query": "What is the capital of France?"}))
    check(nothing.startswith("Nothing relevant in memory"), nothing)

    # memory_read, memory_browse, memory_catalog.
    node = await session.call_tool("memory_read", {"id": mine[2]})
    check(not node.is_error, text_of(node))
    node = result_of(node)
    check(node["body"] and "favorite editor" in node["body"], node)
    trees = await session.call_tool("memory_browse", {})
    check(not trees.is_error and result_of(trees)["trees"], text_of(trees))
    first_tree = result_of(trees)["trees"][0]["tree_id"]
    outline = await session.call_tool("memory_browse", {"tree": first_tree, "depth": 2})
    check(not outline.is_error and result_of(outline)["outline"]["nodes"], text_of(outline))
    catalog = await session.call_tool("memory_catalog", {"budget_chars": 1000})
    check(not catalog.is_error, text_of(catalog))
    catalog = result_of(catalog)
    check(catalog["text"] and len(catalog["text"]) <= 1000, catalog)
    # memory_dream: read-only, and only this scope's sections of any report.
    dream = await session.call_tool("memory_dream", {"limit": 5})
    check(not dream.is_error, text_of(dream))
    check(isinstance(result_of(dream)["reports"], list), result_of(dream))
    check("conversation:c2" not in text_of(dream), text_of(dream))

    # memory_correct: bound to the version read; the same version again is stale.
    fix = {
        "id": node["id"],
        "version": node["version"],
        "text": f"My favorite editor is Helix ({transport}).",
        "message_id": f"fix-{transport}",
    }
    corrected = await session.call_tool("memory_correct", fix)
    check(not corrected.is_error, text_of(corrected))
    check(result_of(corrected)["version"] == node["version"] + 1, result_of(corrected))
    stale = await session.call_tool("memory_correct", fix)
    check(error_of(stale)["code"] == "precondition_failed", text_of(stale))
    await refused(session, "memory_correct", {"id": node["id"], "text": "x y z"}, "version")
    current = text_of(await session.call_tool("memory_retrieve", {"query": "favorite editor"}))
    first = [line for line in current.splitlines() if line.startswith("- [")][0]
    check(f"Helix ({transport})" in first, current)

    # Out of scope: ids of another scope are answered exactly like ids that never existed.
    for their_id in theirs:
        for tool, args in (
            ("memory_read", lambda i: {"id": i}),
            ("memory_correct", lambda i: {"id": i, "version": 1, "text": "Quentin keeps wasps."}),
        ):
            theirs_error = error_of(await session.call_tool(tool, args(their_id)))
            never_error = error_of(await session.call_tool(tool, args(NEVER)))
            check(theirs_error["code"] == "not_found", theirs_error)
            check(
                theirs_error["message"].replace(their_id, "<ID>") == never_error["message"].replace(NEVER, "<ID>"),
                f"{tool} leaks existence: {theirs_error} vs {never_error}",
            )
    for query in ("Quentin bees Porto", "what is the door code?"):
        found = text_of(await session.call_tool("memory_retrieve", {"query": query}))
        check("Quentin" not in found and "4417" not in found, found)
    # memory_forget: only what this scope writes and can read; theirs is not found, like an id
    # that never existed.
    kept = result_of((await session.call_tool("memory_save", {"text": f"The user rides a green Brompton bike ({transport})."})))
    forgotten = await session.call_tool("memory_forget", {"id": kept["chunks"][0]["leaf_id"]})
    check(not forgotten.is_error and result_of(forgotten)["versions"] == 1, text_of(forgotten))
    check("Brompton" not in text_of(await session.call_tool("memory_retrieve", {"query": "what bike does the user ride?"})), "forgotten")
    theirs_error = error_of(await session.call_tool("memory_forget", {"id": theirs[0]}))
    never_error = error_of(await session.call_tool("memory_forget", {"id": NEVER}))
    check(
        theirs_error["message"].replace(theirs[0], "<ID>") == never_error["message"].replace(NEVER, "<ID>"),
        f"memory_forget leaks existence: {theirs_error} vs {never_error}",
    )
    everything = json.dumps(
        [
            result_of((await session.call_tool("memory_catalog", {}))),
            result_of((await session.call_tool("memory_browse", {}))),
        ]
    )
    check("Quentin" not in everything and "c2" not in everything, everything)

    # Arguments cannot name a namespace or a path.
    await refused(session, "memory_retrieve", {"query": "Quentin", "namespace": "conversation:c2"}, "namespace")
    for path in ("../../arbor.json", "/etc/passwd", "memory/conversation/c2/interaction"):
        bad_id = error_of(await session.call_tool("memory_read", {"id": path}))
        check(bad_id["code"] == "invalid_request", bad_id)


async def exercise_agent_binding(session, transport):
    """Bound as an agent (the default) in a conversation, a save of text alone, which is all an
    MCP host such as Claude Desktop sends, is current at once and marked as the agent's; nothing
    in the call can raise its authority."""
    await session.initialize()
    for field in ("actor", "source"):
        await refused(session, "memory_save", {"text": "The user is an admin.", field: "user"}, field)
    saved = await session.call_tool("memory_save", {"text": f"The user's cat is called Biscuit ({transport})."})
    check(not saved.is_error, text_of(saved))
    chunk = result_of(saved)["chunks"][0]
    check(chunk["status"] == "active" and chunk["namespace"] == "conversation:c1", chunk)
    check("retrievable now" in result_of(saved)["message"], result_of(saved))
    # A save that replaces a fact says so, naming the memory, the attribute and both values.
    first = result_of(await session.call_tool("memory_save", {"text": f"The user works at the Ankara branch ({transport})."}))
    moved = result_of(await session.call_tool("memory_save", {"text": f"The user got transferred to the Izmir branch ({transport})."}))
    replaced = moved["chunks"][0].get("replaced", [])
    check([r["leaf_id"] for r in replaced] == [first["chunks"][0]["leaf_id"]], moved)
    check(replaced[0]["attribute"] == "workplace" and "It replaced" in moved["message"], moved)
    # The profile resource says what is current about the user now, and what it replaced.
    me = json.loads((await session.read_resource("arbor://profile/me")).contents[0].text)
    check([s["subject"]["key"] for s in me["subjects"]] == ["@me"], me)
    work = [f for f in me["subjects"][0]["facts"] if f["attribute"] == "workplace"]
    check(work and "Izmir" in work[0]["current"][0]["value"], me)
    check(first["chunks"][0]["leaf_id"] in [h["leaf"] for h in work[0]["history"]], me)
    found = await session.call_tool("memory_retrieve", {"query": "what is the user's cat called?"})
    check(f"Biscuit ({transport})" in text_of(found) and chunk["leaf_id"] in text_of(found), text_of(found))
    node = result_of((await session.call_tool("memory_read", {"id": chunk["leaf_id"]})))
    check(node["actor"] == "agent" and node["source"] == "save", node)


async def exercise_project_agent(session, transport):
    """Bound as an agent to a project, a save waits for a person, and the result says so and
    how to confirm it."""
    await session.initialize()
    saved = await session.call_tool(
        "memory_save", {"text": f"The team ships releases on Tuesdays ({transport}).", "labels": ["release"]}
    )
    check(not saved.is_error, text_of(saved))
    chunk = result_of(saved)["chunks"][0]
    check(chunk["status"] == "candidate" and chunk["namespace"] == "project:p1", chunk)
    message = result_of(saved)["message"]
    check("candidate" in message and f"arbor review confirm {chunk['leaf_id']}" in message, message)
    check(error_of(await session.call_tool("memory_read", {"id": chunk["leaf_id"]}))["code"] == "not_found", chunk)
    found = await session.call_tool("memory_retrieve", {"query": "when does the team ship releases?"})
    check(f"Tuesdays ({transport})" not in text_of(found), text_of(found))


async def exercise_tenants(url, tokens):
    """One multi-tenant server, two tenants with the same conversation names: each session acts
    as its bearer token's tenant, and nothing of one tenant is readable or detectable by the other."""
    async def session_as(token):
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        return client, streamable_http_client(url, http_client=client)

    client_a, transport_a = await session_as(tokens["acme"])
    async with client_a, transport_a as (read, write), ClientSession(read, write) as acme:
        await acme.initialize()
        saved = result_of(await acme.call_tool("memory_save", {"text": "Acme's launch codename is Bluebird."}))
        chunk = saved["chunks"][0]
        check(chunk["status"] == "active", saved)
        check("Bluebird" in text_of(await acme.call_tool("memory_retrieve", {"query": "launch codename"})), "own")
    client_g, transport_g = await session_as(tokens["globex"])
    async with client_g, transport_g as (read, write), ClientSession(read, write) as globex:
        await globex.initialize()
        found = text_of(await globex.call_tool("memory_retrieve", {"query": "Bluebird launch codename"}))
        check("Bluebird" not in found, found)
        theirs = error_of(await globex.call_tool("memory_read", {"id": chunk["leaf_id"]}))
        never = error_of(await globex.call_tool("memory_read", {"id": NEVER}))
        check(
            theirs["message"].replace(chunk["leaf_id"], "<ID>") == never["message"].replace(NEVER, "<ID>"),
            f"another tenant's id leaks: {theirs} vs {never}",
        )
    client_x, transport_x = await session_as("arbor_not-a-token")
    opened = False
    try:
        async with client_x, transport_x as (read, write), ClientSession(read, write) as stranger:
            await asyncio.wait_for(stranger.initialize(), timeout=10)
            opened = True
    except Exception:  # the SDK reports the 401 as a failed connection
        pass
    check(not opened, "a session without a valid token was opened")


def start_http_server(binary, root, *binding):
    server = subprocess.Popen(
        [binary, "--root", root, "serve", "--mcp", "--listen", "127.0.0.1:0", *binding],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = server.stdout.readline()
    match = re.match(r"listening on ([0-9.]+:[0-9]+)", line)
    if not match:
        server.kill()
        raise SystemExit(f"unexpected first line from arbor serve: {line!r}")
    return server, f"http://{match.group(1)}/mcp"


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arbor", required=True)
    binary = os.path.abspath(parser.parse_args().arbor)
    with tempfile.TemporaryDirectory() as scratch:
        root = os.path.join(scratch, "store")
        arbor(binary, root, "init")
        mine = ingest(
            binary,
            root,
            BOUND,
            ["Dana prefers morning meetings before 10am.", "Dana is leading the migration to Postgres.", "My favorite editor is Zed."],
        )
        theirs = ingest(binary, root, OTHER, ["Quentin keeps bees in Porto.", "Quentin's door code is 4417."])
        arbor(binary, root, "jobs", "run")

        params = StdioServerParameters(command=binary, args=["--root", root, "serve", "--mcp", *BOUND])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise_agent_binding(session, "stdio")
        params = StdioServerParameters(command=binary, args=["--root", root, "serve", "--mcp", "--project", "p1"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise_project_agent(session, "stdio")
        params = StdioServerParameters(command=binary, args=["--root", root, "serve", "--mcp", *BOUND, *AS_USER])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, mine, theirs, "stdio")
        print("mcp over stdio: ok")

        # The stdio run corrected mine[2]; the HTTP run corrects its new version.
        mine = mine[:2] + [json.loads(arbor(binary, root, "--json", "retrieve", "favorite editor", *BOUND))["evidence"][0]["node_id"]["id"]]
        runs = (
            (BOUND, lambda session: exercise_agent_binding(session, "http")),
            (["--project", "p1"], lambda session: exercise_project_agent(session, "http")),
            (BOUND + AS_USER, lambda session: exercise(session, mine, theirs, "http")),
        )
        for binding, run in runs:
            server, url = start_http_server(binary, root, *binding)
            try:
                async with streamable_http_client(url) as (read, write):
                    async with ClientSession(read, write) as session:
                        await run(session)
            finally:
                server.terminate()
                server.wait(timeout=10)
        print("mcp over streamable HTTP: ok")

        tenants_root = os.path.join(scratch, "tenants")
        arbor(binary, tenants_root, "init")
        tokens = {
            name: json.loads(arbor(binary, tenants_root, "--json", "tokens", "create", "--tenant", name, *BOUND))["token"]
            for name in ("acme", "globex")
        }
        server, url = start_http_server(binary, tenants_root, "--tenants")
        try:
            await exercise_tenants(url, tokens)
        finally:
            server.terminate()
            server.wait(timeout=10)
        print("mcp over streamable HTTP, one server for several tenants: ok")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as failure:
        print(f"mcp client test failed: {failure}", file=sys.stderr)
        sys.exit(1)
