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

TOOLS = {
    "memory_retrieve",
    "memory_browse",
    "memory_read",
    "memory_save",
    "memory_correct",
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
        check(tool.output_schema and tool.output_schema.get("type") == "object", f"{tool.name} output schema")
        properties = tool.input_schema.get("properties", {})
        for scope in ("namespace", "namespaces", "read_chain", "path", "conversation", "project"):
            check(scope not in properties, f"{tool.name} must not take {scope}")
    check("before answering" in tools["memory_retrieve"].description, "retrieve says when to call it")

    # memory_save lands in the bound write namespace.
    saved = await session.call_tool("memory_save", {"text": f"My favorite tea is sencha ({transport}).", "message_id": "py-1"})
    check(not saved.is_error, text_of(saved))
    chunk = saved.structured_content["chunks"][0]
    check(chunk["namespace"] == "conversation:c1" and chunk["outcome"] in ("created", "superseding"), chunk)

    # Bound as the user (a host relaying its user's words), a save in a conversation is current.
    check(chunk["status"] == "active", chunk)

    # memory_retrieve returns the pack, with evidence from the chain only.
    pack = await session.call_tool("memory_retrieve", {"query": "when does Dana like meetings?"})
    check(not pack.is_error, text_of(pack))
    pack = pack.structured_content
    check(pack["evidence"], "evidence found")
    check("morning meetings" in pack["evidence"][0]["text"], pack["evidence"][0])
    check(pack["coverage"]["namespaces"] == ["conversation:c1", "project:p1", "global"], pack["coverage"])
    for item in pack["evidence"]:
        check(item["namespace"] in pack["coverage"]["namespaces"], item)

    # memory_read, memory_browse, memory_catalog.
    node = await session.call_tool("memory_read", {"id": mine[2]})
    check(not node.is_error, text_of(node))
    node = node.structured_content
    check(node["body"] and "favorite editor" in node["body"], node)
    trees = await session.call_tool("memory_browse", {})
    check(not trees.is_error and trees.structured_content["trees"], text_of(trees))
    first_tree = trees.structured_content["trees"][0]["tree_id"]
    outline = await session.call_tool("memory_browse", {"tree": first_tree, "depth": 2})
    check(not outline.is_error and outline.structured_content["outline"]["nodes"], text_of(outline))
    catalog = await session.call_tool("memory_catalog", {"budget_chars": 1000})
    check(not catalog.is_error, text_of(catalog))
    catalog = catalog.structured_content
    check(catalog["text"] and len(catalog["text"]) <= 1000, catalog)
    # memory_dream: read-only, and only this scope's sections of any report.
    dream = await session.call_tool("memory_dream", {"limit": 5})
    check(not dream.is_error, text_of(dream))
    check(isinstance(dream.structured_content["reports"], list), dream.structured_content)
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
    check(corrected.structured_content["version"] == node["version"] + 1, corrected.structured_content)
    stale = await session.call_tool("memory_correct", fix)
    check(error_of(stale)["code"] == "precondition_failed", text_of(stale))
    await refused(session, "memory_correct", {"id": node["id"], "text": "x y z"}, "version")
    current = await session.call_tool("memory_retrieve", {"query": "favorite editor"})
    check(f"Helix ({transport})" in current.structured_content["evidence"][0]["text"], current.structured_content)

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
        found = (await session.call_tool("memory_retrieve", {"query": query})).structured_content
        found.pop("query")
        check("Quentin" not in json.dumps(found) and "4417" not in json.dumps(found), found)
    everything = json.dumps(
        [
            (await session.call_tool("memory_catalog", {})).structured_content,
            (await session.call_tool("memory_browse", {})).structured_content,
        ]
    )
    check("Quentin" not in everything and "c2" not in everything, everything)

    # Arguments cannot name a namespace or a path.
    await refused(session, "memory_retrieve", {"query": "Quentin", "namespace": "conversation:c2"}, "namespace")
    for path in ("../../arbor.json", "/etc/passwd", "memory/conversation/c2/interaction"):
        bad_id = error_of(await session.call_tool("memory_read", {"id": path}))
        check(bad_id["code"] == "invalid_request", bad_id)


async def exercise_agent_binding(session, mine, transport):
    """Bound as an agent (the default), what the agent saves or corrects is its own: it waits for
    a person, whatever the call says about who is speaking."""
    await session.initialize()
    await refused(session, "memory_save", {"text": "The user is an admin.", "actor": "user"}, "actor")
    for arguments in (
        {"text": f"The user seems to like dark roast ({transport})."},
        {"text": f"The user said they like green tea ({transport}).", "message_id": f"quoted-{transport}"},
    ):
        saved = (await session.call_tool("memory_save", arguments)).structured_content["chunks"][0]
        check(saved["status"] == "candidate", saved)
        check(error_of(await session.call_tool("memory_read", {"id": saved["leaf_id"]}))["code"] == "not_found", saved)
    node = (await session.call_tool("memory_read", {"id": mine[2]})).structured_content
    own = await session.call_tool(
        "memory_correct",
        {"id": node["id"], "version": node["version"], "text": f"Maybe the editor is Vim ({transport}).", "message_id": "m-7"},
    )
    check(not own.is_error and own.structured_content["status"] == "candidate", text_of(own))
    current = await session.call_tool("memory_retrieve", {"query": "favorite editor"})
    check("Vim" not in current.structured_content["evidence"][0]["text"], current.structured_content)


def start_http_server(binary, root, *binding):
    server = subprocess.Popen(
        [binary, "--root", root, "serve", "--mcp", "--listen", "127.0.0.1:0", *BOUND, *binding],
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
                await exercise_agent_binding(session, mine, "stdio")
        params = StdioServerParameters(command=binary, args=["--root", root, "serve", "--mcp", *BOUND, *AS_USER])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, mine, theirs, "stdio")
        print("mcp over stdio: ok")

        # The stdio run corrected mine[2]; the HTTP run corrects its new version.
        mine = mine[:2] + [json.loads(arbor(binary, root, "--json", "retrieve", "favorite editor", *BOUND))["evidence"][0]["node_id"]["id"]]
        for binding, run in (((), exercise_agent_binding), (AS_USER, exercise)):
            server, url = start_http_server(binary, root, *binding)
            try:
                async with streamable_http_client(url) as (read, write):
                    async with ClientSession(read, write) as session:
                        if binding:
                            await run(session, mine, theirs, "http")
                        else:
                            await run(session, mine, "http")
            finally:
                server.terminate()
                server.wait(timeout=10)
        print("mcp over streamable HTTP: ok")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as failure:
        print(f"mcp client test failed: {failure}", file=sys.stderr)
        sys.exit(1)
